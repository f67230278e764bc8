//! aho-corasick (with `std`) on 4 MiB of text, with and without `perf-literal`: one name that
//! never occurs, three such names, eight such names, and three frequent words.
use aho_corasick::AhoCorasick;

fn main() {
    let hay = harness::text(4 << 20, 7);
    let rare = [
        "Sherlock", "Watson", "Holmes", "Moriarty", "Lestrade", "Hudson", "Adler", "Mycroft",
    ];
    let common = ["timeout", "server", "request"];
    for (name, patterns) in [
        ("rare1", &rare[..1]),
        ("rare3", &rare[..3]),
        ("rare8", &rare[..]),
        ("common3", &common[..]),
    ] {
        let ac = AhoCorasick::new(patterns).unwrap();
        harness::time(name, 7, || ac.find_iter(&hay).count());
    }
}
