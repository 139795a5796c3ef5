//! Deployment files: any values give a deployment or a clear error, never a panic (issue 13, point 11).

use proptest::prelude::*;
use scalebench_deploy::Deployment;

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        (0u64..300).prop_map(|v| v.to_string()),
        Just("18446744073709551615".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn any_values_give_a_deployment_or_an_error(
        database in prop::sample::select(vec!["postgres", "mariadb", "redis", "cassandra", "etcd", "external", "mongo"]),
        nodes in number(),
        ready in number(),
        idle in number(),
        heap in number(),
        memory in "[0-9]{0,6} ?[KMGT]?i?B?",
        key in "[a-z_]{1,20}",
        text in "[ -~]{0,20}",
    ) {
        let toml = format!(
            "name = \"x\"\ndatabase = \"{database}\"\nnodes = {nodes}\nready_timeout_s = {ready}\n\
             idle_timeout_s = {idle}\nmemory = {memory:?}\n[cassandra]\nheap_mb = {heap}\n\
             [server]\n{key} = {text:?}\n"
        );
        let _ = Deployment::from_toml(&toml);
    }

    #[test]
    fn any_text_gives_a_deployment_or_an_error(text in "[ -~\n]{0,200}") {
        let _ = Deployment::from_toml(&text);
    }
}
