//! simd-json parsing 4 MiB of JSON records (numbers, short strings) and 4 MiB of JSON
//! strings (text with escapes) into borrowed values, four times each.
use simd_json::prelude::*;

fn records() -> Vec<u8> {
    let words = harness::text(1 << 20, 7);
    let words: Vec<&str> = words.split_whitespace().collect();
    let mut out = String::from("[");
    let mut i = 0;
    while out.len() < 4 << 20 {
        let (a, b) = (words[i % words.len()], words[(i * 7 + 3) % words.len()]);
        out.push_str(&format!(
            r#"{{"id":{i},"name":"{a} {b}","score":{:.3},"tags":["{a}","{b}"],"ok":{}}},"#,
            (i as f64 * 0.37).sin() * 100.0,
            i % 3 == 0
        ));
        i += 1;
    }
    out.pop();
    out.push(']');
    out.into_bytes()
}

fn strings() -> Vec<u8> {
    let text = harness::text(4 << 20, 11);
    let mut out = String::from("[");
    for line in text.lines() {
        out.push('"');
        out.push_str(&line.replace("the", "\\\"the\\\"").replace("of", "of\\n"));
        out.push_str("\",");
    }
    out.pop();
    out.push(']');
    out.into_bytes()
}

fn parse(json: &[u8]) -> usize {
    let mut copy = json.to_vec();
    let value = simd_json::to_borrowed_value(&mut copy).expect("valid JSON");
    value.as_array().map_or(0, |items| items.len())
}

fn main() {
    let (records, strings) = (records(), strings());
    harness::time("records", 9, || (0..4).map(|_| parse(&records)).sum::<usize>());
    harness::time("strings", 9, || (0..4).map(|_| parse(&strings)).sum::<usize>());
}
