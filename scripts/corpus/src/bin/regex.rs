//! regex: a few patterns of the kinds log scanners use, over stdin (or built-in text).
use std::io::Read;

fn main() {
    let mut text = String::new();
    let _ = std::io::stdin().read_to_string(&mut text);
    if text.is_empty() {
        text = "2024-01-02 ERROR user=alice@example.org took 132ms\n".repeat(100);
    }
    let patterns = [
        r"(?m)^(\d{4})-(\d{2})-(\d{2})",
        r"[\w.+-]+@[\w-]+\.[\w.]+",
        r"(?i)error|warn(ing)?",
        r"took (\d+)ms",
        r"\p{Greek}+|\p{Cyrillic}+",
    ];
    for p in patterns {
        match regex::Regex::new(p) {
            Ok(re) => {
                let n = re.captures_iter(&text).count();
                println!("{p}: {n}");
            }
            Err(e) => eprintln!("{p}: {e}"),
        }
    }
    let set = regex::RegexSet::new(patterns).map(|s| s.matches(&text).len());
    println!("set: {set:?}");
}
