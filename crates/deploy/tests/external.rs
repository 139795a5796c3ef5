//! External deployments: scalebench starts nothing and drives the cluster through its shell hooks.
//! The hooks here are real scripts that keep their "cluster" in files.

use std::time::Duration;

use scalebench_deploy::{Cluster, DeployError, Deployment, OperationKind};

fn external(
    dir: &std::path::Path,
    hooks: &str,
    endpoints: &str,
) -> (Deployment, std::path::PathBuf) {
    let toml = format!(
        "name = \"ext\"\ndatabase = \"external\"\nready_timeout_s = 2\nidle_timeout_s = 2\n\
         [external]\nurl = \"redis://127.0.0.1:1\"\nendpoints = [{endpoints}]\ndata_dirs = [\"data\"]\n\
         [external.hooks]\n{hooks}"
    );
    let file = dir.join("ext.toml");
    std::fs::write(&file, &toml).unwrap();
    (Deployment::from_toml(&toml).unwrap(), file)
}

#[test]
fn hooks_add_and_remove_nodes_and_tell_ready_and_idle() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(dir.path().join("data/table"), vec![7u8; 40_000]).unwrap();
    let hooks = "up = \"touch up\"\n\
                 is_ready = \"test -f up\"\n\
                 is_idle = \"if [ -f busy ]; then echo \\\"$(cat busy)\\\"; exit 1; fi\"\n\
                 add_node = \"echo added >> log; echo 10.0.0.9:7000\"\n\
                 remove_node = \"echo \\\"removed $SCALEBENCH_NODE of $SCALEBENCH_NODES\\\" >> log\"\n\
                 flush = \"echo flush >> log\"\n\
                 compact = \"echo compact >> log\"\n\
                 down = \"rm up\"\n";
    let (d, file) = external(dir.path(), hooks, "\"10.0.0.1:7000\", \"10.0.0.2:7000\"");
    let clusters = dir.path().join("clusters");
    let mut c = Cluster::up(d, &file, &clusters, false).unwrap();
    assert!(
        dir.path().join("up").exists(),
        "the up hook ran in the file's directory"
    );
    assert_eq!(c.url(), "redis://127.0.0.1:1");
    assert_eq!(c.state.nodes.len(), 2);
    c.wait_idle().unwrap();

    // Busy: the hook's output names what is busy, and the wait ends with it after the timeout.
    std::fs::write(dir.path().join("busy"), "streams to node 2").unwrap();
    let err = c.wait_idle().unwrap_err();
    assert!(matches!(err, DeployError::NotIdle { .. }));
    assert!(err.to_string().contains("streams to node 2"), "{err}");
    std::fs::remove_file(dir.path().join("busy")).unwrap();

    let id = c.add_node().unwrap();
    assert_eq!(c.state.nodes.last().unwrap().endpoint(), "10.0.0.9:7000");
    // State survives between commands.
    let mut again = Cluster::open(&c.state.dir).unwrap();
    assert_eq!(again.state.nodes.len(), 3);
    again.remove_node(Some("node1")).unwrap();
    assert_eq!(again.flush().unwrap(), vec!["flush hook ran".to_string()]);
    assert_eq!(
        again.compact().unwrap(),
        vec!["compact hook ran".to_string()]
    );
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert_eq!(
        log,
        "added\nremoved 10.0.0.1:7000 of 10.0.0.1:7000,10.0.0.2:7000,10.0.0.9:7000\nflush\ncompact\n"
    );
    assert_eq!(id, "node3");
    let space = again.space("now", 10, "usertable");
    assert!(space.total_bytes >= 40_000);
    assert!(
        again.snapshot("s").is_err(),
        "snapshots are for local clusters"
    );
    again.down();
    assert!(!dir.path().join("up").exists(), "the down hook ran");
}

/// Issue 42: the operations under load are the hooks an external cluster has; a rolling restart
/// without a hook of its own is the restart hook node by node; one it has no hook for is refused
/// as bad input before anything runs.
#[test]
fn operations_run_their_hooks_and_only_those_the_deployment_has() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    let hooks = "crash_node = \"echo \\\"crash $SCALEBENCH_NODE\\\" >> log\"\n\
                 restart_node = \"echo \\\"restart $SCALEBENCH_NODE\\\" >> log; echo back\"\n\
                 fail_primary = \"echo failover >> log; echo promoted 10.0.0.2\"\n\
                 repair = \"echo repair >> log\"\n";
    let (d, file) = external(dir.path(), hooks, "\"10.0.0.1:7000\", \"10.0.0.2:7000\"");
    let mut c = Cluster::up(d, &file, &dir.path().join("clusters"), false).unwrap();
    assert_eq!(
        c.operations(),
        [
            OperationKind::Crash,
            OperationKind::Restart,
            OperationKind::RollingRestart,
            OperationKind::FailPrimary,
            OperationKind::Repair
        ]
    );
    let refused = c.check_operation(OperationKind::Add, None).unwrap_err();
    assert!(matches!(refused, DeployError::BadInput(_)), "{refused}");
    assert!(
        refused.to_string().contains("has no operation 'add'"),
        "{refused}"
    );
    assert!(c
        .check_operation(OperationKind::Restart, Some("node9"))
        .is_err());
    c.check_operation(OperationKind::Restart, Some("node2"))
        .unwrap();

    assert_eq!(
        c.restart_node("node2").unwrap(),
        ["restart_node hook ran: back"]
    );
    assert_eq!(c.rolling_restart().unwrap().len(), 2);
    assert_eq!(
        c.fail_primary().unwrap(),
        "fail_primary hook ran: promoted 10.0.0.2"
    );
    c.crash_node("node1").unwrap();
    assert_eq!(c.repair().unwrap(), ["repair hook ran"]);
    let log = std::fs::read_to_string(dir.path().join("log")).unwrap();
    assert_eq!(
        log,
        "restart 10.0.0.2:7000\nrestart 10.0.0.1:7000\nrestart 10.0.0.2:7000\nfailover\n\
         crash 10.0.0.1:7000\nrepair\n"
    );
    c.down();
}

#[test]
fn without_hooks_ready_means_every_endpoint_accepts_connections() {
    let dir = tempfile::tempdir().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let open = listener.local_addr().unwrap().port();
    let closed = scalebench_deploy::free_port().unwrap();
    let (d, file) = external(dir.path(), "", &format!("\"127.0.0.1:{open}\""));
    let mut c = Cluster::up(d, &file, &dir.path().join("c"), false).unwrap();
    assert!(c.status().not_ready.is_empty());
    // A bad snapshot name is the user's input (exit 2), named, checked first.
    match c.snapshot("../escape") {
        Err(DeployError::BadInput(m)) => assert!(m.contains("../escape"), "{m}"),
        other => panic!("{other:?}"),
    }
    // The state file may hold the external URL's password: its owner's alone (issue 13, point 9).
    let state = std::fs::metadata(c.state.dir.join("cluster.json")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&state.permissions()) & 0o777,
        0o600
    );
    // Issue 39, point 4: the state decides which processes get signals. One others could have
    // written (mode 0666), or another user's, is refused; a start time of 0 matches no process.
    let dir_of = c.state.dir.clone();
    let state_file = dir_of.join("cluster.json");
    assert!(Cluster::open(&dir_of).is_ok());
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&state_file, std::fs::Permissions::from_mode(0o666)).unwrap();
    match Cluster::open(&dir_of) {
        Err(DeployError::BadInput(m)) => assert!(m.contains("writable by others"), "{m}"),
        other => panic!("{:?}", other.map(|c| c.state.dir.clone())),
    }
    std::fs::set_permissions(&state_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    if scalebench_deploy::account::running_as_root() {
        std::os::unix::fs::chown(&state_file, Some(65534), None).unwrap();
        match Cluster::open(&dir_of) {
            Err(DeployError::BadInput(m)) => assert!(m.contains("belongs to uid 65534"), "{m}"),
            other => panic!("{:?}", other.map(|c| c.state.dir.clone())),
        }
        std::os::unix::fs::chown(&state_file, Some(0), None).unwrap();
    }
    let anyone = scalebench_deploy::ProcessRef {
        pid: std::process::id(),
        start_ticks: 0,
    };
    assert!(!anyone.is_running(), "a start time of 0 proves nothing");
    let init = scalebench_deploy::ProcessRef::of(1).unwrap();
    assert!(!init.is_running(), "pid 1 is never a node");

    let (d, file) = external(
        dir.path(),
        "",
        &format!("\"127.0.0.1:{open}\", \"127.0.0.1:{closed}\""),
    );
    let started = std::time::Instant::now();
    let err = match Cluster::up(d, &file, &dir.path().join("c2"), false) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("a closed endpoint is not ready"),
    };
    assert!(err.contains(&format!("127.0.0.1:{closed}")), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// `up` replaces only a directory it created itself, with nothing running from it: a directory of the
/// same name that holds other files, or a cluster whose state cannot be read, is left as it is.
#[test]
fn up_never_removes_a_directory_it_did_not_create() {
    let dir = tempfile::tempdir().unwrap();
    let (d, file) = external(dir.path(), "", "\"10.0.0.1:7000\"");
    let clusters = dir.path().join("clusters");
    let precious = clusters.join("ext/important.txt");
    std::fs::create_dir_all(precious.parent().unwrap()).unwrap();
    std::fs::write(&precious, "precious").unwrap();
    let Err(err) = Cluster::up(d.clone(), &file, &clusters, false) else {
        panic!("up took a directory it did not create")
    };
    assert!(
        err.to_string()
            .contains("not a scalebench cluster directory"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "precious");
    std::fs::remove_file(&precious).unwrap();

    // An empty directory is taken; a cluster it made is replaced by the next `up`.
    let c = Cluster::up(d.clone(), &file, &clusters, false).unwrap();
    let state = c.state.dir.join("cluster.json");
    drop(c);
    Cluster::up(d.clone(), &file, &clusters, false).unwrap();

    // A corrupt state file may hide running servers: refused, the directory kept.
    std::fs::write(&state, "{ not json").unwrap();
    let Err(err) = Cluster::up(d, &file, &clusters, false) else {
        panic!("up replaced a cluster whose state it cannot read")
    };
    assert!(err.to_string().contains("cannot read the state"), "{err}");
    assert!(state.exists());
}
