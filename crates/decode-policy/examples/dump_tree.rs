//! Prints the tree-sitter-bash syntax tree of each argument (a development aid).
#![allow(clippy::print_stdout)]

fn dump(node: tree_sitter::Node<'_>, src: &str, depth: usize, field: Option<&str>) {
    let text = &src[node.byte_range()];
    let text: String = text.chars().take(60).collect();
    println!(
        "{}{}{} [{}] {:?}",
        "  ".repeat(depth),
        field.map(|f| format!("{f}: ")).unwrap_or_default(),
        node.kind(),
        if node.is_named() { "n" } else { "a" },
        text
    );
    let mut cursor = node.walk();
    for (i, child) in node.children(&mut cursor).enumerate() {
        let f = node.field_name_for_child(i as u32);
        dump(child, src, depth + 1, f);
    }
}

fn main() {
    let mut parser = tree_sitter::Parser::new();
    parser
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .expect("bash grammar");
    for src in std::env::args().skip(1) {
        let tree = parser.parse(&src, None).expect("parse");
        println!("=== {src:?} error={}", tree.root_node().has_error());
        dump(tree.root_node(), &src, 0, None);
    }
}
