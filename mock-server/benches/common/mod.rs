//! What the mock's benchmarks share.

/// A number from the environment variable `name`, or `default` when it is unset
/// or not a number.
pub fn env_number<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}
