use super::*;

/// `[procedure.clients]`: each launcher's settings, and no other's.
#[test]
fn each_launcher_takes_its_own_settings() {
    let clients = |toml: &str| {
        toml::from_str::<ClientsProcedure>(toml)
            .map_err(|e| e.to_string())
            .and_then(|c| c.check())
    };
    let at = "rendezvous = \"etcd://127.0.0.1:2379/x\"";
    assert_eq!(clients(&format!("launcher = \"srun\"\n{at}")), Ok(()));
    assert!(clients("launcher = \"srun\"")
        .unwrap_err()
        .contains("needs a rendezvous"));
    let hosts = clients(&format!("launcher = \"srun\"\n{at}\nhosts = [\"a\"]"));
    assert!(hosts
        .unwrap_err()
        .contains("hosts needs launcher = \"ssh\""));
    let cpus = clients(&format!("launcher = \"srun\"\n{at}\ncpus = [0]"));
    assert!(cpus
        .unwrap_err()
        .contains("cpus needs launcher = \"local\""));
    let srun = clients("srun_command = \"srun -p fast\"");
    assert!(srun
        .unwrap_err()
        .contains("srun_command needs launcher = \"srun\""));
    assert!(clients("launcher = \"slurm\"").is_err());
}

const SPEC: &str = r#"
name = "t"
repetitions = 3
discard_first = 1
[[database]]
name = "lite"
db = "sqlite:///tmp/x.db"
[[database]]
name = "pg"
deployment = "pg.toml"
[[configuration]]
name = "off"
properties = { "sqlite.synchronous" = "off" }
[[configuration]]
name = "full"
[[workload]]
name = "a"
workload = "a"
[sweep]
threads = [1, 2]
recordcount = [100]
"#;

#[test]
fn a_plan_too_large_to_build_is_refused_before_it_is_built() {
    for (reps, sweep) in [(u32::MAX, 1), (1000, 200)] {
        let values: Vec<String> = (1..=sweep).map(|i| i.to_string()).collect();
        let text = format!(
            "name = \"x\"\nrepetitions = {reps}\n[[database]]\nname = \"n\"\ndb = \"null://\"\n\
             [[workload]]\nname = \"a\"\nworkload = \"a\"\n[sweep]\nthreads = [{}]\n",
            values.join(", ")
        );
        let err = Experiment::from_toml(&text).unwrap_err();
        assert!(err.contains("at most 100000"), "{err}");
    }
}

#[test]
fn each_value_keeps_a_cell_per_new_value_with_its_repetitions() {
    let e = Experiment::from_toml(SPEC).unwrap();
    let plan = e.plan();
    let kept = Cells::EachValue.select(plan.clone());
    let cells: Vec<&str> = kept
        .iter()
        .filter(|r| r.repetition == 1)
        .map(|r| r.cell.as_str())
        .collect();
    // lite/off/threads=1 brings four values, threads=2 the fifth; lite/full brings "full";
    // pg brings "pg"; nothing else is new.
    assert_eq!(
        cells,
        [
            "lite/off/a/recordcount=100,threads=1",
            "lite/off/a/recordcount=100,threads=2",
            "lite/full/a/recordcount=100,threads=1",
            "pg/off/a/recordcount=100,threads=1",
        ]
    );
    assert_eq!(kept.len(), 4 * 3, "every repetition of a kept cell");
    for (k, values) in [
        ("database", ["lite", "pg"]),
        ("configuration", ["off", "full"]),
    ] {
        for v in values {
            assert!(
                kept.iter().any(|r| match k {
                    "database" => r.database == v,
                    _ => r.configuration == v,
                }),
                "{k} {v}"
            );
        }
    }
    assert_eq!(Cells::All.select(plan.clone()), plan);
    assert!("each-value".parse::<Cells>().is_ok());
    let bad = "pairs".parse::<Cells>().unwrap_err();
    assert!(bad.contains("\"pairs\""), "{bad}");
}

#[test]
fn the_plan_is_the_product_with_repetitions() {
    let e = Experiment::from_toml(SPEC).unwrap();
    let plan = e.plan();
    assert_eq!(plan.len(), 2 * 2 * 2 * 3);
    assert_eq!(plan[0].cell, "lite/off/a/recordcount=100,threads=1");
    assert_eq!(plan[0].repetition, 1);
    assert_eq!(plan[2].repetition, 3);
    assert_eq!(plan[3].cell, "lite/off/a/recordcount=100,threads=2");
    // Thread counts share the data; configurations do not.
    assert_eq!(plan[0].data_key, plan[3].data_key);
    assert_ne!(plan[0].data_key, plan[6].data_key);
}

#[test]
fn workloads_on_the_same_data_share_one_load_and_run_one_after_another() {
    let e = Experiment::from_toml(
        r#"
name = "w"
[[database]]
name = "lite"
db = "sqlite:///tmp/x.db"
[[workload]]
name = "R"
workload = "R"
[[workload]]
name = "big"
workload = "R"
properties = { recordcount = 5000 }
[[workload]]
name = "M"
workload = "M"
properties = { requestdistribution = "zipfian" }
[[workload]]
name = "file"
workload = "w.properties"
properties = { readproportion = 1 }
[[workload]]
name = "file-update"
workload = "w.properties"
properties = { updateproportion = 1 }
[sweep]
threads = [1, 2]
"#,
    )
    .unwrap();
    let plan = e.plan();
    let order: Vec<&str> = plan.iter().map(|r| r.workload.as_str()).collect();
    // Wegert's R and M load the same records: M follows R, before the larger data set.
    assert_eq!(
        order,
        [
            "R",
            "R",
            "M",
            "M",
            "big",
            "big",
            "file",
            "file",
            "file-update",
            "file-update"
        ]
    );
    assert_eq!(plan[0].data_key, plan[3].data_key);
    assert_ne!(plan[0].data_key, plan[4].data_key);
    assert_eq!(plan[6].data_key, plan[9].data_key);
    assert_ne!(plan[0].data_key, plan[6].data_key);
}

#[test]
fn configurations_for_some_databases_only() {
    let e = Experiment::from_toml(
        &SPEC.replace("name = \"full\"", "name = \"full\"\ndatabases = [\"pg\"]"),
    )
    .unwrap();
    let cells: std::collections::BTreeSet<String> = e.plan().into_iter().map(|r| r.cell).collect();
    // lite: off only; pg: off and full.
    assert_eq!(cells.len(), 3 * 2);
    assert!(!cells.iter().any(|c| c.starts_with("lite/full")));
    let only_pg = Experiment::from_toml(
        &SPEC
            .replace("name = \"off\"", "name = \"off\"\ndatabases = [\"pg\"]")
            .replace("name = \"full\"", "name = \"full\"\ndatabases = [\"pg\"]"),
    )
    .unwrap();
    assert!(only_pg
        .plan()
        .iter()
        .any(|r| r.cell.starts_with("lite/default/")));
}

#[test]
fn a_configuration_changes_the_deployment_it_runs_against() {
    let d = scalebench_deploy::Deployment::from_toml(
        "name = \"c\"\ndatabase = \"cassandra\"\nnodes = 3\n[cassandra]\nheap_mb = 400\n",
    )
    .unwrap();
    let config: Configuration = toml::from_str(
        "name = \"group\"\nserver = { concurrent_reads = 12 }\ndeployment = { nodes = 1, cassandra = { commitlog_sync = \"group\" } }",
    )
    .unwrap();
    let derived = Experiment::derived_deployment(&d, &config).unwrap();
    assert_eq!(derived.nodes, 1);
    assert_eq!(derived.cassandra.commitlog_sync, "group");
    assert_eq!(derived.cassandra.heap_mb, Some(400), "other keys stay");
    assert_eq!(
        derived.server_settings(),
        [("concurrent_reads".into(), "12".into())]
    );
    let bad: Configuration =
        toml::from_str("name = \"x\"\ndeployment = { cassandra = { commitlog_sync = \"never\" } }")
            .unwrap();
    let e = Experiment::derived_deployment(&d, &bad).unwrap_err();
    assert!(e.contains("\"x\"") && e.contains("never"), "{e}");

    // A database's own settings apply under every configuration's (which win).
    let database: DatabaseSpec = toml::from_str(
        "name = \"c\"\ndeployment = \"c.toml\"\ndeployment_settings = { memory = \"1GiB\", nodes = 4 }",
    )
    .unwrap();
    let merged = Experiment::with_database_settings(&database, &config);
    let derived = Experiment::derived_deployment(&d, &merged).unwrap();
    assert_eq!(derived.nodes, 1, "the configuration's nodes win");
    assert_eq!(derived.memory.map(|m| m.bytes()), Some(1 << 30));
    assert_eq!(derived.cassandra.commitlog_sync, "group");
    let no_file = Experiment::from_toml(&SPEC.replace(
        "name = \"lite\"",
        "name = \"lite\"\ndeployment_settings = { memory = \"1GiB\" }",
    ))
    .unwrap_err();
    assert!(no_file.contains("no deployment file"), "{no_file}");
}

#[test]
fn the_miniature_is_the_same_matrix_scaled_down() {
    let full = Experiment::from_toml(
        &SPEC
            .replace("recordcount = [100]", "recordcount = [20000, 50, 100000]")
            .replace(
                "workload = \"a\"",
                "workload = \"a\"\nproperties = { recordcount = 10000 }",
            ),
    )
    .unwrap();
    let mut mini = full.clone();
    mini.miniature();
    assert_eq!(mini.name, "t-miniature");
    assert_eq!(mini.procedure.elastic.stable_timeout.to_string(), "10s");
    // A doubling waits longer for its data to move; swept actions keep the short wait.
    let mut doubling = full.clone();
    doubling.procedure.elastic.action = ScaleAction::Double;
    let mut swept = doubling.clone();
    doubling.miniature();
    assert_eq!(doubling.procedure.elastic.stable_timeout.to_string(), "30s");
    swept
        .sweep
        .insert(ACTION, vec![toml::Value::String("double".into())])
        .unwrap();
    swept.miniature();
    assert_eq!(swept.procedure.elastic.stable_timeout.to_string(), "10s");
    // The machine's page cache is dropped once per miniature, not before each of its runs.
    assert!(mini.procedure.drop_caches_once);
    assert_eq!(mini.procedure.elastic.set_repeats, 2);
    let sets = |r: u64| {
        let mut e = full.clone();
        e.procedure.request_set = Some(r);
        e.miniature();
        e.procedure.request_set
    };
    assert_eq!(
        (sets(50_000), sets(500), sets(20)),
        (Some(500), Some(100), Some(20))
    );
    assert_eq!(
        (mini.repetitions, mini.discard_first),
        (1, 0),
        "one repetition"
    );
    let mut elastic = full.clone();
    elastic.procedure.measure = Measure::Elastic;
    elastic.procedure.elastic.steps = 3;
    elastic.miniature();
    assert_eq!((elastic.repetitions, elastic.discard_first), (1, 0));
    assert_eq!(elastic.procedure.elastic.steps, 1, "one elastic step");
    assert_eq!(
        elastic.procedure.elastic.stable_sets, 3,
        "Dory's rule over 3 steps"
    );
    let mut short = full.clone();
    short.procedure.elastic.stable_sets = 2;
    short.miniature();
    assert_eq!(short.procedure.elastic.stable_sets, 2, "never raised");
    // No warm-up stays none (init-to-cleanup timing needs none); a longer one is 200 ms.
    assert_eq!(
        (
            mini.procedure.warmup.to_string(),
            mini.procedure.duration.to_string()
        ),
        ("0s".to_string(), "1s".to_string())
    );
    let mut divided = full.clone();
    divided.miniature_divisor = 1000;
    divided.miniature();
    assert_eq!(
        divided.workloads[0].properties["recordcount"].as_integer(),
        Some(100),
        "10,000 / 1000, at least 100"
    );
    let mut warmed = full.clone();
    warmed.procedure.warmup = "30s".parse().unwrap();
    warmed.miniature();
    assert_eq!(warmed.procedure.warmup.to_string(), "200ms");
    assert_eq!(
        mini.workloads[0].properties["recordcount"].as_integer(),
        Some(100)
    );
    let swept: Vec<i64> = mini.sweep["recordcount"]
        .iter()
        .filter_map(|v| v.given().as_integer())
        .collect();
    assert_eq!(
        swept,
        [200, 50, 1000],
        "divided by 100, at least 100, never raised"
    );
    // Same cells, fewer repetitions.
    let cells = |e: &Experiment| {
        let mut c: Vec<String> = e.plan().into_iter().map(|r| r.cell).collect();
        c.dedup();
        c.len()
    };
    assert_eq!(cells(&mini), cells(&full));
    assert_eq!(
        mini.plan().len() * full.repetitions as usize,
        full.plan().len()
    );
}

#[test]
fn each_cluster_size_is_deployed_once() {
    let e = Experiment::from_toml(
        &SPEC
            .replace("db = \"sqlite:///tmp/x.db\"", "deployment = \"lite.toml\"")
            .replace("recordcount = [100]", "nodes = [3, 1]"),
    )
    .unwrap();
    let sizes: Vec<(String, String)> = e
        .plan()
        .iter()
        .map(|r| (r.database.clone(), r.params[CLUSTER_SIZE].text()))
        .collect();
    let mut changes = sizes.windows(2).filter(|w| w[0] != w[1]).count();
    changes += 1;
    // Two databases x two sizes: four deployments, in order of size.
    assert_eq!(changes, 4, "{sizes:?}");
    assert_eq!(sizes[0], ("lite".into(), "1".into()));
    assert_eq!(
        sizes.len(),
        2 * 2 * 2 * 2 * 3,
        "databases x configurations x sizes x threads x repetitions"
    );
}

/// `error` names every one of `parts`.
fn assert_names_all(error: &str, parts: &[&str]) {
    assert!(parts.iter().all(|part| error.contains(part)), "{error}");
}

#[test]
fn bad_experiments_are_named() {
    let bad = |from: &str, to: &str| Experiment::from_toml(&SPEC.replace(from, to)).unwrap_err();
    assert!(bad("discard_first = 1", "discard_first = 3").contains("discard_first"));
    assert!(bad("threads = [1, 2]", "threads = [\"many\"]").contains("many"));
    assert!(bad("name = \"pg\"", "name = \"lite\"").contains("twice"));
    assert!(bad("deployment = \"pg.toml\"", "").contains("either db"));
    assert!(bad("repetitions = 3", "repetitions = 3\nrepetition = 2").contains("repetition"));
    // A cluster-size sweep needs node counts, and a deployment for every database.
    assert!(bad("recordcount = [100]", "nodes = [0]").contains("node count"));
    // Operations are swept by elastic experiments only, each a valid action (issue 42).
    let action = bad("recordcount = [100]", "action = [\"add:1\"]");
    assert_names_all(&action, &["sweep.action", "elastic"]);
    let elastic_action = |a: &str| {
        Experiment::from_toml(&format!(
            "name = \"ops\"\n[procedure]\nmeasure = \"elastic\"\nrequest_set = 10\n\
             [[database]]\nname = \"pg\"\ndeployment = \"pg.toml\"\n\
             [[workload]]\nname = \"a\"\nworkload = \"a\"\n[sweep]\naction = [{a}]\n"
        ))
        .map(|_| String::new())
        .unwrap_or_else(|e| e)
    };
    assert_eq!(elastic_action("\"rolling-restart\", \"restart:node2\""), "");
    assert!(elastic_action("\"grow\"").contains("'grow'"));
    assert!(elastic_action("3").contains("not an operation"));
    let no_cluster = bad("recordcount = [100]", "nodes = [1, 3]");
    assert_names_all(&no_cluster, &["\"lite\"", "deployment"]);
    // Run options are typed and checked with the file; command-line text is refused.
    let procedure = |p: &str| bad("discard_first = 1", &format!("[procedure]\n{p}"));
    let threshold = procedure("thresholds = [\"read.p99 < soon\"]");
    assert_names_all(
        &threshold,
        &["procedure.thresholds", "threshold 'read.p99 < soon'"],
    );
    let bad_option = procedure("options = { op_timeout = \"soon\" }");
    assert_names_all(&bad_option, &["'soon'", "procedure.options.op_timeout"]);
    assert!(procedure("options = { batchsize = 1 }").contains("batchsize"));
    // Issue 43: a rate profile in the file is checked with it.
    let profile = procedure("options = { rate_profile = \"sine:mean=10,amplitude=20,period=1s\" }");
    assert_names_all(&profile, &["procedure.options.rate_profile", "negative"]);
    let argv = procedure("args = [\"--create-schema\"]");
    assert!(argv.contains("[procedure.options]"), "{argv}");
    // Issue 61: Dory's fixed shares are shares of request sets, and named shared or fixed.
    let fixed = procedure("request_set_threads = \"fixed\"");
    assert_names_all(&fixed, &["request_set_threads", "request_set"]);
    assert!(procedure("request_set = 10\nrequest_set_threads = \"bound\"").contains("bound"));
    // The consistency probe and the fault (issue 32): checked with the file.
    assert!(procedure("consistency_probe = 0").contains("consistency_probe = 0"));
    let delays = procedure("consistency_probe = 10\nprobe_delays = [1, -2]");
    assert_names_all(&delays, &["probe_delays", "60000"]);
    assert!(procedure("probe_delays = [1]").contains("needs procedure.consistency_probe"));
    let elastic = procedure("consistency_probe = 10\nmeasure = \"elastic\"");
    assert!(elastic.contains("measure = \"run\""), "{elastic}");
    let fault = |f: &str| bad("discard_first = 1", &format!("[fault]\n{f}"));
    assert!(fault("kind = \"crash\"\nnode = \"node1\"").contains("'crash'"));
    assert!(
        fault("kind = \"pause\"\nnode = \"node1\"\nevery = \"1s\"\nfor = \"2s\"")
            .contains("less than its period")
    );
    let no_deployment = fault("kind = \"pause\"\nnode = \"node1\"\ndatabases = [\"lite\"]");
    assert!(
        no_deployment.contains("\"lite\" has no deployment"),
        "{no_deployment}"
    );
    assert!(
        fault("kind = \"pause\"\nnode = \"node1\"\ndatabases = [\"x\"]")
            .contains("no database \"x\"")
    );
    assert!(fault("kind = \"pause\"\nnode = \"node1\"\nlasting = \"1s\"").contains("lasting"));
    // A fault on the databases with deployments, as each run's request.
    let e = Experiment::from_toml(&SPEC.replace(
        "discard_first = 1",
        "discard_first = 1\n[procedure]\nconsistency_probe = 20\n[fault]\nkind = \"pause\"\nnode = \"node2\"\nfor = \"300ms\"",
    ))
    .unwrap();
    let fault = e.fault.as_ref().unwrap();
    let requests: Vec<_> = e
        .databases
        .iter()
        .map(|d| fault.request_for(d, ""))
        .collect();
    assert_eq!(requests[0], None, "{:?}", e.databases[0]);
    let pause = requests[1].as_ref().unwrap();
    assert_eq!(
        (pause.node.as_str(), pause.every, pause.pause),
        (
            "node2",
            std::time::Duration::from_secs(1),
            std::time::Duration::from_millis(300)
        )
    );
}

/// Swept values are parsed once, when the file is read: each run carries what its values set, and
/// the values keep the text they were given in (cells, the results database, the stored spec).
#[test]
fn swept_values_are_typed_when_read_and_written_as_given() {
    let swept = "threads = [1, 2]\ntarget = [1e3, 500]\nclients = [1]";
    let e = Experiment::from_toml(&SPEC.replace("threads = [1, 2]", swept)).unwrap();
    let plan = e.plan();
    let run = plan
        .iter()
        .find(|r| r.params["threads"].text() == "1" && r.params["target"].text() == "1000.0")
        .unwrap();
    assert_eq!(run.params["threads"].axis(), &SweepAxis::Threads(1));
    assert_eq!(
        run.params["target"].axis(),
        &SweepAxis::Target(scalebench_workload::rate::Pace::of_target(1000.0).unwrap())
    );
    assert_eq!(run.params["clients"].axis(), &SweepAxis::Clients(1));
    assert_eq!(
        run.params["recordcount"].axis(),
        &SweepAxis::Property("recordcount".into(), "100".into())
    );
    assert_eq!(
        serde_json::to_value(&run.params).unwrap(),
        serde_json::json!({"clients": "1", "recordcount": "100", "target": "1000.0", "threads": "1"})
    );
    assert!(run
        .cell
        .ends_with("/clients=1,recordcount=100,target=1000.0,threads=1"));
    assert_eq!(
        serde_json::to_value(&e).unwrap()["sweep"]["target"],
        serde_json::json!([1000.0, 500])
    );
    // A value its flag refuses is the file's error, naming it.
    let zero = Experiment::from_toml(&SPEC.replace("threads = [1, 2]", "threads = [1, 0]"));
    let zero = zero.unwrap_err();
    assert!(
        zero.contains("invalid value '0' for sweep threads"),
        "{zero}"
    );
}
