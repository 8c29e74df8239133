//! serde_json: parse a document into values and into typed records, then write both back.
use serde::{Deserialize, Serialize};
use std::io::Read;

#[derive(Serialize, Deserialize, Debug)]
struct Record {
    id: u64,
    name: String,
    tags: Vec<String>,
    score: f64,
    parent: Option<Box<Record>>,
}

fn main() {
    let mut text = String::new();
    let _ = std::io::stdin().read_to_string(&mut text);
    if text.is_empty() {
        text = r#"[{"id":1,"name":"a","tags":["x","y"],"score":1.5,"parent":null},
                  {"id":2,"name":"b","tags":[],"score":-2e3,"parent":{"id":1,"name":"a","tags":[],"score":0.0,"parent":null}}]"#
            .to_string();
    }
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(v) => println!("{}", serde_json::to_string_pretty(&v).map(|s| s.len()).unwrap_or(0)),
        Err(e) => eprintln!("value: {e}"),
    }
    match serde_json::from_str::<Vec<Record>>(&text) {
        Ok(records) => println!("{}", serde_json::to_string(&records).map(|s| s.len()).unwrap_or(0)),
        Err(e) => eprintln!("records: {e}"),
    }
}
