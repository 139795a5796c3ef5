//! Database URLs: any text parses or is refused, never panics, and what is shown of it never holds
//! the password (issue 13, points 9 and 11).

use proptest::prelude::*;
use scalebench_binding::DbUrl;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn any_text_parses_or_is_refused(text in "[ -~]{0,60}") {
        if let Ok(u) = DbUrl::parse(&text) {
            let _ = u.redacted();
            let _ = u.hosts(1);
        }
    }

    #[test]
    fn passwords_never_show(
        scheme in prop::sample::select(vec!["postgres", "mysql", "redis", "cassandra", "etcd", "sqlite", "null"]),
        user in "[a-z]{1,8}",
        password in "[A-Za-z0-9]{12,20}",
        hosts in prop::collection::vec(("[a-z0-9.]{1,12}", prop::option::of(any::<u16>())), 1..4),
        path in "[a-z_/]{0,10}",
    ) {
        let hosts: Vec<String> = hosts
            .iter()
            .map(|(h, p)| p.map_or_else(|| h.clone(), |p| format!("{h}:{p}")))
            .collect();
        let text = format!("{scheme}://{user}:{password}@{}/{path}", hosts.join(","));
        match DbUrl::parse(&text) {
            Ok(u) => prop_assert!(!u.redacted().contains(&password), "{}", u.redacted()),
            Err(e) => prop_assert!(!e.to_string().contains(&password), "{e}"),
        }
    }
}
