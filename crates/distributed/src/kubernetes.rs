//! Kubernetes manifests for a distributed run: an Indexed Job whose pods are the clients (each gets
//! its index from JOB_COMPLETION_INDEX), a headless Service giving them stable names, and, when no
//! rendezvous is given, a one-member etcd with its Service for them to meet in. Arguments that hold
//! a password are not written into the manifests: each comes from a Secret the user creates.
//!
//! YAML is written from a template whose every value is a JSON string or number, which YAML reads
//! as the same scalar: no YAML library (the maintained choices are few) for a fixed shape.

use serde_json::json;

use scalebench_session::environment::redacted_command;
use scalebench_session::error::SessionError;

pub const DEFAULT_ETCD_IMAGE: &str = "quay.io/coreos/etcd:v3.5.17";

/// What to write manifests for.
#[derive(Debug, Clone)]
pub struct KubernetesJob {
    /// Names every object (`NAME`, `NAME-clients`, `NAME-etcd`), a DNS label.
    pub name: String,
    /// An image with `scalebench` on its PATH.
    pub image: String,
    pub clients: u32,
    /// The client's command after `scalebench`: `run a --db ... -p ...`.
    pub command: Vec<String>,
    /// Where the clients meet; None: an etcd of the run's own.
    pub rendezvous: Option<String>,
    pub etcd_image: String,
    /// How long the clients may take to start and meet (pods are scheduled and pulled first).
    pub start_timeout: String,
}

/// The manifests, and the Secret the user must create first (its name and keys), if any argument
/// held a password.
#[derive(Debug, Clone, PartialEq)]
pub struct Manifests {
    pub yaml: String,
    pub secret: Option<(String, Vec<String>)>,
}

impl Manifests {
    /// What to create first when an argument held a password: the Secret, with its keys.
    /// The manifests to `output` (written whole or not at all), else to standard output.
    pub fn write(&self, output: Option<&std::path::Path>) -> Result<(), SessionError> {
        match output {
            Some(path) => scalebench_session::files::write_atomically(path, &self.yaml),
            None => {
                use std::io::Write as _;
                let _ = writeln!(std::io::stdout(), "{}", self.yaml.trim_end());
                Ok(())
            }
        }
    }

    pub fn secret_note(&self) -> Option<String> {
        let (name, keys) = self.secret.as_ref()?;
        let literals: Vec<String> = keys
            .iter()
            .map(|k| format!("--from-literal={k}='...'"))
            .collect();
        Some(format!(
            "arguments with a password come from the Secret {name}; create it first with their values \
             (arg-K is the K-th argument after --, counted from 0): kubectl create secret generic {name} {}",
            literals.join(" ")
        ))
    }
}

/// The clients' command after `kubernetes --`, as its request: every pod is one client of one
/// run, so what belongs to one process is refused here, not by each pod. `given_clients`: the
/// command gave --clients, --client-index or --rendezvous, which the manifests add.
/// The clients' command after `--` runs a phase: `load ...`, `run ...`, `saturate ...` or `replay ...`.
pub fn check_clients_verb(command: &[String]) -> Result<(), SessionError> {
    match command.first().map(String::as_str) {
        Some("load" | "run" | "saturate" | "replay") => Ok(()),
        _ => Err(SessionError::Usage(
            "the clients' command after -- must be `load ...`, `run ...`, `saturate ...` or `replay ...`".into(),
        )),
    }
}

pub fn check_clients_command(
    request: &scalebench_session::request::RunRequest,
    phases: &[scalebench_exec::Phase],
    given_clients: bool,
    rendezvous: Option<&str>,
) -> Result<(), SessionError> {
    if given_clients {
        return Err(SessionError::Usage(
            "the clients' command after -- takes no --clients, --client-index or --rendezvous: the manifests add them".into(),
        ));
    }
    let Some(db) = &request.db else {
        return Err(SessionError::Usage(
            "the clients' command after -- needs --db: the clients share the database".into(),
        ));
    };
    request
        .check(
            scalebench_session::request::Processes::clients(false),
            phases,
        )
        .map_err(|e| SessionError::Usage(format!("the clients' command after --: {e}")))?;
    check_client(db, rendezvous)
}

/// The clients' command checked as `run` checks it before the manifests are written: its database
/// URL (one line, the password hidden) and the rendezvous. Property files are the image's, not this
/// machine's, so the rest of the command is checked by the clients.
pub fn check_client(db: &str, rendezvous: Option<&str>) -> Result<(), SessionError> {
    let url = scalebench_binding::DbUrl::parse(db)?;
    if scalebench_binding::registry::for_scheme(url.scheme()).is_none() {
        return Err(SessionError::Usage(format!(
            "{} ('{}')",
            scalebench_binding::registry::no_binding(url.scheme()),
            url.redacted()
        )));
    }
    if let Some(url) = rendezvous {
        crate::etcd::RendezvousUrl::parse(url)?;
    }
    Ok(())
}

/// The Indexed Job of the clients and, unless a rendezvous is given, a one-member etcd with its
/// Service for them to meet in.
pub fn manifests(job: &KubernetesJob) -> Result<Manifests, SessionError> {
    let name = &job.name;
    // Services are named by RFC 1035 labels: a letter first.
    let dns_label = name.len() <= 52
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.ends_with('-');
    if !dns_label {
        return Err(SessionError::Usage(format!(
            "invalid value '{name}' for '--name': expected a lowercase letter, then lowercase letters, digits and '-', at most 52 characters"
        )));
    }
    let rendezvous = job
        .rendezvous
        .clone()
        .unwrap_or_else(|| format!("etcd://{name}-etcd:2379/{name}"));
    let secret_name = format!("{name}-secrets");
    // Arguments that hold a password come from the Secret, expanded by Kubernetes ($(VAR)).
    let redacted = redacted_command(
        &job.command
            .iter()
            .map(std::ffi::OsString::from)
            .collect::<Vec<_>>(),
    );
    let mut args = vec![json!("scalebench")];
    let mut env = Vec::new();
    let mut secret_keys = Vec::new();
    for (i, (arg, shown)) in job.command.iter().zip(&redacted).enumerate() {
        if arg == shown {
            // Kubernetes expands $(VAR) in a container's command; $$ keeps a literal $.
            args.push(json!(arg.replace("$(", "$$(")));
        } else {
            let var = format!("SCALEBENCH_ARG_{i}");
            let key = format!("arg-{i}");
            args.push(json!(format!("$({var})")));
            env.push(format!(
                "            - name: {}\n              valueFrom:\n                secretKeyRef: {{name: {}, key: {}}}\n",
                json!(var),
                json!(secret_name),
                json!(key)
            ));
            secret_keys.push(key);
        }
    }
    for a in [
        "--clients".to_string(),
        job.clients.to_string(),
        "--rendezvous".into(),
        rendezvous,
        "--start-timeout".into(),
        job.start_timeout.clone(),
    ] {
        args.push(json!(a));
    }
    let args_yaml: Vec<String> = args
        .iter()
        .map(|a| format!("            - {a}\n"))
        .collect();
    // A search's runs meet under PREFIX/run-K; client 0 prints the answer (its pod's log).
    let (what, run) = if job.command.first().map(String::as_str) == Some("saturate") {
        (
            "client 0 leads the search and prints its answer\n# (`kubectl logs` of the pod of index 0). Collect run K of the search where you are with\n",
            "/run-K",
        )
    } else {
        (
            "client 0 merges. Collect the results where you are with\n",
            "",
        )
    };
    let gather = match &job.rendezvous {
        Some(url) => format!("# `scalebench gather --rendezvous {url}{run} -o run.json`.\n"),
        None => format!(
            "# `scalebench gather --rendezvous etcd://127.0.0.1:2379/{name}{run} -o run.json` while\n\
             # `kubectl port-forward svc/{name}-etcd 2379:2379` reaches the run's etcd.\n"
        ),
    };
    let mut yaml = format!(
        "# A distributed scalebench run: {clients} clients as an Indexed Job (scalebench reads its index\n\
         # from JOB_COMPLETION_INDEX); {what}\
         {gather}\
         apiVersion: v1\n\
         kind: Service\n\
         metadata:\n  name: {svc}\n  labels: {{app.kubernetes.io/name: scalebench, scalebench/run: {n}}}\n\
         spec:\n  clusterIP: None\n  selector: {{scalebench/run: {n}, scalebench/role: client}}\n\
         ---\n\
         apiVersion: batch/v1\n\
         kind: Job\n\
         metadata:\n  name: {n}\n  labels: {{app.kubernetes.io/name: scalebench, scalebench/run: {n}}}\n\
         spec:\n  completionMode: Indexed\n  completions: {clients}\n  parallelism: {clients}\n  backoffLimit: 0\n\
         \x20 template:\n    metadata:\n      labels: {{app.kubernetes.io/name: scalebench, scalebench/run: {n}, scalebench/role: client}}\n\
         \x20   spec:\n      subdomain: {svc}\n      restartPolicy: Never\n      containers:\n        - name: client\n          image: {image}\n          command:\n{args}",
        clients = job.clients,
        n = json!(name),
        svc = json!(format!("{name}-clients")),
        image = json!(job.image),
        args = args_yaml.concat(),
    );
    if !env.is_empty() {
        yaml += &format!("          env:\n{}", env.concat());
    }
    if job.rendezvous.is_none() {
        let etcd = json!(format!("{name}-etcd"));
        yaml += &format!(
            "---\n\
             apiVersion: v1\n\
             kind: Service\n\
             metadata:\n  name: {etcd}\n  labels: {{app.kubernetes.io/name: scalebench, scalebench/run: {n}}}\n\
             spec:\n  selector: {{scalebench/run: {n}, scalebench/role: etcd}}\n  ports:\n    - {{name: client, port: 2379}}\n\
             ---\n\
             apiVersion: v1\n\
             kind: Pod\n\
             metadata:\n  name: {etcd}\n  labels: {{app.kubernetes.io/name: scalebench, scalebench/run: {n}, scalebench/role: etcd}}\n\
             spec:\n  containers:\n    - name: etcd\n      image: {image}\n      command:\n        - etcd\n        - --data-dir=/var/lib/etcd\n        - --listen-client-urls=http://0.0.0.0:2379\n        - {advertise}\n      ports:\n        - {{containerPort: 2379}}\n",
            n = json!(name),
            image = json!(job.etcd_image),
            advertise = json!(format!("--advertise-client-urls=http://{name}-etcd:2379")),
        );
    }
    Ok(Manifests {
        yaml,
        secret: (!secret_keys.is_empty()).then_some((secret_name, secret_keys)),
    })
}
