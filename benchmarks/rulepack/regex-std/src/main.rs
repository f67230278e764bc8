//! regex (all `perf-*` features) on 4 MiB of text: a literal, an alternation of literals, a
//! character-class pattern; with and without `std`.
use regex::Regex;

fn main() {
    let hay = harness::text(4 << 20, 7);
    for (name, pattern) in [
        ("literal", "request timeout"),
        ("alternation", "error|warning|timeout"),
        ("class", "[a-z]+ing"),
    ] {
        let re = Regex::new(pattern).unwrap();
        harness::time(name, 7, || re.find_iter(&hay).count());
    }
}
