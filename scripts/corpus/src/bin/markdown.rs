//! pulldown-cmark: Markdown from stdin (or a built-in document) to HTML.
use std::io::Read;

fn main() {
    let mut text = String::new();
    let _ = std::io::stdin().read_to_string(&mut text);
    if text.is_empty() {
        text = "# Title\n\n*emphasis*, `code`, [a link](https://example.org)\n\n- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n".repeat(8);
    }
    let options = pulldown_cmark::Options::all();
    let parser = pulldown_cmark::Parser::new_ext(&text, options);
    let mut html = String::new();
    pulldown_cmark::html::push_html(&mut html, parser);
    println!("{} bytes of HTML", html.len());
}
