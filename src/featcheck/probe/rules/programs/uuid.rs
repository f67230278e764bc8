//! uuid generating 100,000 random (version 4) UUIDs.
fn main() {
    harness::time("new_v4", 7, || {
        // Random ids differ between builds: the result is how many came out as version 4.
        (0..100_000)
            .filter(|_| uuid::Uuid::new_v4().get_version_num() == 4)
            .count()
    });
}
