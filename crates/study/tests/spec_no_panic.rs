//! Experiment files: any values give an experiment or a clear error, never a panic, and a plan that
//! validates is small enough to build (issue 13, point 11).

use proptest::prelude::*;
use scalebench_study::experiment::spec::Experiment;

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<u32>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        (0u32..5).prop_map(|v| v.to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(500))]

    #[test]
    fn any_values_give_an_experiment_or_an_error(
        repetitions in number(),
        discard in number(),
        duration in "[0-9]{1,4}(ms|s|m|h|x)?",
        sweep_len in 0usize..40,
        threads in number(),
        measure in prop::sample::select(vec!["run", "load", "elastic", "other"]),
    ) {
        // Thread counts from 1: a swept value is checked when the file is read, and 0 threads is none.
        let sweep: Vec<String> = (1..=sweep_len).map(|i| i.to_string()).collect();
        let toml = format!(
            "name = \"x\"\nrepetitions = {repetitions}\ndiscard_first = {discard}\n\
             [procedure]\nmeasure = \"{measure}\"\nduration = \"{duration}\"\nwarmup = \"{duration}\"\n\
             [[database]]\nname = \"n\"\ndb = \"null://\"\n\
             [[workload]]\nname = \"a\"\nworkload = \"a\"\n\
             [sweep]\nthreads = [{}]\nconcurrency = [{threads}]\nrecordcount = [{}]\n",
            sweep.join(", "),
            sweep.join(", "),
        );
        if let Ok(e) = Experiment::from_toml(&toml) {
            prop_assert!(e.plan().len() <= 100_000);
        }
    }

    #[test]
    fn any_text_gives_an_experiment_or_an_error(text in "[ -~\n]{0,200}") {
        let _ = Experiment::from_toml(&text);
    }
}
