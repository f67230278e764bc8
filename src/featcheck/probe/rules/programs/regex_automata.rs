//! regex-automata's meta regex on 4 MiB of text: a literal, an alternation of frequent
//! literals, and an alternation of names that never occur.
use regex_automata::meta::Regex;

fn main() {
    let hay = harness::text(4 << 20, 7);
    for (name, pattern) in [
        ("literal", "request timeout"),
        ("alternation", "error|warning|timeout"),
        ("rare3", "Sherlock|Watson|Holmes"),
    ] {
        let re = Regex::new(pattern).unwrap();
        harness::time(name, 7, || re.find_iter(&hay).count());
    }
}
