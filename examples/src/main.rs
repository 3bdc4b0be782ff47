//! Lists the examples of the toolkit.

fn main() {
    println!("mediagen examples: see examples/README.md");
}
