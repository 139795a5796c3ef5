//! Issue 63: the database's address and password from where users already keep them, on the
//! README test's PostgreSQL server (TLS only; no server of its own): PGPASSWORD (the README block), a
//! ~/.pgpass with a wildcard line (ignored at mode 0644), PGHOST/PGPORT/PGUSER/PGDATABASE, a Unix
//! socket URL in libpq's form, SCALEBENCH_DB and --db-file. Each loads a few records.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use scalebench_deploy::postgres::PostgresServer;

/// A PostgreSQL that takes TCP connections over TLS only (`hostnossl ... reject`, as a managed
/// database does), its certificate self-signed for 127.0.0.1 in `certs` (a directory under the
/// system's temporary one, which the server's account can enter; it must outlive the server).
pub fn tls_only_postgres(base: &Path, certs: &Path) -> PostgresServer {
    let key = rcgen::KeyPair::generate().unwrap();
    let cert = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_file, key_file, hba) = (
        certs.join("server.pem"),
        certs.join("server.key"),
        certs.join("pg_hba.conf"),
    );
    std::fs::write(&cert_file, cert.pem()).unwrap();
    std::fs::write(&key_file, key.serialize_pem()).unwrap();
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    std::fs::set_permissions(certs, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::write(
        &hba,
        "local all all trust\n\
         hostnossl all all 127.0.0.1/32 reject\n\
         hostssl all all 127.0.0.1/32 scram-sha-256\n",
    )
    .unwrap();
    scalebench_deploy::postgres::account()
        .unwrap()
        .give(certs)
        .unwrap();
    let path = |p: &Path| p.to_str().unwrap().to_string();
    let (cert_file, key_file, hba) = (path(&cert_file), path(&key_file), path(&hba));
    let settings = [
        ("ssl", "on"),
        ("ssl_cert_file", cert_file.as_str()),
        ("ssl_key_file", key_file.as_str()),
        ("hba_file", hba.as_str()),
    ];
    PostgresServer::start(base, &settings, true).expect("PostgreSQL starts")
}

/// Plain text to the TLS-only server is refused, in one line that says why.
pub fn assert_refuses_plain_text(server: &PostgresServer, dir: &Path) {
    let url = format!("{}?sslmode=disable", without_password(server));
    let o = load(
        dir,
        "plain_text",
        &["--db", &url],
        &[("PGPASSWORD", server.password())],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    let line = err.lines().find(|l| l.starts_with("error:")).unwrap_or("");
    assert!(line.contains("no encryption"), "{err}");
}

/// The server's URL with its user and no password.
pub fn without_password(server: &PostgresServer) -> String {
    server
        .url()
        .replace(&format!(":{}@", server.password()), "@")
}

/// `scalebench load` of 20 records into `table` with only `env` of libpq's variables set, HOME in
/// `dir` (its ~/.pgpass) and `args` for the database.
fn load(dir: &Path, table: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_scalebench"));
    cmd.args(["load", "a", "--create-schema", "--no-monitor"])
        .args(["-p", "recordcount=20", "-p", &format!("table={table}")])
        .args(args)
        .env("HOME", dir)
        .env("SCALEBENCH_STATE_DIR", dir.join("state"))
        .stdin(Stdio::null());
    for var in [
        "PGPASSWORD",
        "PGPASSFILE",
        "PGHOST",
        "PGPORT",
        "PGUSER",
        "PGDATABASE",
        "SCALEBENCH_DB",
    ] {
        cmd.env_remove(var);
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn assert_loaded(o: &Output, what: &str, password: &str) {
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{what}: {err}");
    assert!(out.contains("INSERT"), "{what}: {out}");
    assert!(
        !out.contains(password) && !err.contains(password),
        "{what}: password shown"
    );
}

pub fn assert_each_source_connects(server: &PostgresServer, dir: &Path) {
    let password = server.password();
    let port = server.port.to_string();
    let bare = without_password(server);

    // Without any: the driver's own complaint, exit 1.
    let o = load(dir, "creds_none", &["--db", &bare], &[]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    // ~/.pgpass: a line for another host, then a wildcard line for this port and user.
    let pgpass = dir.join(".pgpass");
    std::fs::write(
        &pgpass,
        format!("# comment\nelsewhere:*:*:bench:wrong\n*:{port}:*:bench:{password}\n"),
    )
    .unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let o = load(dir, "creds_pgpass", &["--db", &bare], &[]);
    assert_loaded(&o, "~/.pgpass", password);
    // Readable by others: ignored as libpq ignores it, and the error says why.
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = load(dir, "creds_pgpass_open", &["--db", &bare], &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("group or world access"), "{err}");
    // PGPASSFILE names another file.
    let elsewhere = dir.join("pgpass-elsewhere");
    std::fs::rename(&pgpass, &elsewhere).unwrap();
    std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = elsewhere.display().to_string();
    let o = load(
        dir,
        "creds_pgpassfile",
        &["--db", &bare],
        &[("PGPASSFILE", &file)],
    );
    assert_loaded(&o, "PGPASSFILE", password);

    // Everything from PG* variables: a URL with no host, user, database or password.
    let env = [
        ("PGHOST", "127.0.0.1"),
        ("PGPORT", port.as_str()),
        ("PGUSER", "bench"),
        ("PGDATABASE", "ycsb"),
        ("PGPASSWORD", password),
    ];
    let o = load(dir, "creds_env", &["--db", "postgres://"], &env);
    assert_loaded(&o, "PG* variables", password);

    // libpq's Unix socket form (local connections are trusted on this server: no password).
    let socket = server.sql("SHOW unix_socket_directories").unwrap();
    let url = format!(
        "postgres:///ycsb?host={}&port={port}&user=bench",
        socket.trim()
    );
    let o = load(dir, "creds_socket", &["--db", &url], &[]);
    assert_loaded(&o, "Unix socket", password);

    // SCALEBENCH_DB and --db-file: the whole URL, password included, kept out of argv.
    let o = load(
        dir,
        "creds_env_url",
        &[],
        &[("SCALEBENCH_DB", &server.url())],
    );
    assert_loaded(&o, "SCALEBENCH_DB", password);
    let db_file = dir.join("db-url");
    std::fs::write(&db_file, format!("{}\n", server.url())).unwrap();
    let path = db_file.display().to_string();
    let o = load(dir, "creds_file", &["--db-file", &path], &[]);
    assert_loaded(&o, "--db-file", password);
    let o = load(
        dir,
        "creds_no_file",
        &["--db-file", "/nonexistent/db-url"],
        &[],
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("/nonexistent/db-url"), "{err}");
}
