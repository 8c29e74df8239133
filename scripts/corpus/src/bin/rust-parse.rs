//! syn: parse Rust source from stdin (or this file's own text) and count what it holds.
use std::io::Read;
use syn::visit::Visit;

#[derive(Default)]
struct Count {
    functions: usize,
    expressions: usize,
}

impl<'a> Visit<'a> for Count {
    fn visit_item_fn(&mut self, f: &'a syn::ItemFn) {
        self.functions += 1;
        syn::visit::visit_item_fn(self, f);
    }
    fn visit_expr(&mut self, e: &'a syn::Expr) {
        self.expressions += 1;
        syn::visit::visit_expr(self, e);
    }
}

fn main() {
    let mut text = String::new();
    let _ = std::io::stdin().read_to_string(&mut text);
    if text.is_empty() {
        text = include_str!("rust-parse.rs").to_string();
    }
    match syn::parse_file(&text) {
        Ok(file) => {
            let mut count = Count::default();
            count.visit_file(&file);
            println!("{} functions, {} expressions, {:?}", count.functions, count.expressions, file.items.first().map(|_| ()));
        }
        Err(e) => eprintln!("{e}"),
    }
}
