//! aho-corasick on 4 MiB of text: names that never occur (a pure scan) and words that often do.
use aho_corasick::AhoCorasick;

fn main() {
    let hay = harness::text(4 << 20, 7);
    let rare = ["Sherlock", "Watson", "Holmes", "Moriarty", "Lestrade", "Hudson", "Adler", "Mycroft"];
    let common = ["timeout", "server", "request"];
    for (name, patterns) in [("rare", &rare[..]), ("common", &common[..])] {
        let ac = AhoCorasick::new(patterns).unwrap();
        harness::time(name, 7, || ac.find_iter(&hay).count());
    }
}
