//! Certificates made by the test (rcgen) for servers that also accept TLS: a CA, a server
//! certificate it signs for localhost and 127.0.0.1, a client certificate it signs, and a second CA
//! that signed nothing of the server's (and one client certificate of its own).

use std::path::PathBuf;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair};

pub struct TlsFiles {
    /// The CA that signed the server's certificate.
    pub ca: PathBuf,
    /// A CA that did not: a client trusting only it must refuse the server.
    pub other_ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The server's key and certificate in one PEM file (Cassandra's PEM keystore).
    pub key_and_cert: PathBuf,
    /// A client certificate and key the CA signed, and a pair another CA signed.
    pub client: (PathBuf, PathBuf),
    pub other_client: (PathBuf, PathBuf),
    pub dir: PathBuf,
}

fn ca(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    CertifiedIssuer::self_signed(params, KeyPair::generate().unwrap()).unwrap()
}

/// The files given to the system account a server named `account_name` runs as (see `tls_files`).
pub fn tls_files_of_server(account_name: &str) -> TlsFiles {
    tls_files(&scalebench_deploy::Account::for_server(account_name).unwrap())
}

/// Writes the files in a new directory under the system's temporary directory (which every server
/// account can enter) and gives it to `account` (PostgreSQL and MariaDB refuse a key others read).
/// The directory lives as long as the test process's servers.
pub fn tls_files(account: &scalebench_deploy::account::Account) -> TlsFiles {
    let dir = tempfile::Builder::new()
        .prefix("scalebench-test-tls-")
        .tempdir_in(std::env::temp_dir())
        .unwrap()
        .keep();
    let ca = ca("scalebench test CA");
    let other = ca_other();
    let key = KeyPair::generate().unwrap();
    let params =
        CertificateParams::new(vec!["localhost".to_string(), "127.0.0.1".to_string()]).unwrap();
    let cert = params.signed_by(&key, &ca).unwrap();
    let files = TlsFiles {
        ca: dir.join("ca.pem"),
        other_ca: dir.join("other-ca.pem"),
        cert: dir.join("server.pem"),
        key: dir.join("server.key"),
        key_and_cert: dir.join("server-key-and-cert.pem"),
        client: (dir.join("client.pem"), dir.join("client.key")),
        other_client: (dir.join("other-client.pem"), dir.join("other-client.key")),
        dir: dir.clone(),
    };
    std::fs::write(&files.ca, ca.pem()).unwrap();
    std::fs::write(&files.other_ca, other.pem()).unwrap();
    std::fs::write(&files.cert, cert.pem()).unwrap();
    std::fs::write(&files.key, key.serialize_pem()).unwrap();
    std::fs::write(
        &files.key_and_cert,
        format!("{}{}", key.serialize_pem(), cert.pem()),
    )
    .unwrap();
    for ((cert_file, key_file), issuer) in [(&files.client, &ca), (&files.other_client, &other)] {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "scalebench test client");
        std::fs::write(cert_file, params.signed_by(&key, issuer).unwrap().pem()).unwrap();
        std::fs::write(key_file, key.serialize_pem()).unwrap();
    }
    use std::os::unix::fs::PermissionsExt;
    for private in [&files.key, &files.key_and_cert] {
        std::fs::set_permissions(private, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    account.give(&dir).unwrap();
    files
}

fn ca_other() -> CertifiedIssuer<'static, KeyPair> {
    ca("another CA")
}

/// The one line a refused certificate gives: it names the check and the cause.
pub fn assert_names_certificate_verification(message: &str) {
    assert!(
        message.contains("certificate verification failed"),
        "the check is not named: {message}"
    );
    assert_eq!(message.lines().count(), 1, "{message}");
}

/// Through `url`: 100 records loaded, then reads of them (workload C, half a second) without a
/// failure, so the session carried data both ways.
pub fn assert_loads_and_reads(url: &str, table: &str) {
    let props = [("table", table), ("recordcount", "100")];
    let w = super::workload(&props);
    super::assert_loads_all(super::config(url, &w, &[], true, true), &w);
    let c = super::builtin("c", &props);
    let read = super::phase(
        super::config(url, &c, &[], false, false),
        &c,
        super::run_plan(0.5),
    )
    .result;
    assert_eq!(read.totals.failed, 0, "{:?}", read.errors);
    assert!(
        read.operations.get("READ").is_some_and(|s| s.ok > 0),
        "no read"
    );
}

/// The message of opening `url` with `open`, which must fail.
pub fn open_error<F: scalebench_binding::BindingFactory>(
    open: impl Fn(&scalebench_binding::BindingConfig) -> Result<F, scalebench_binding::BindingError>,
    url: &str,
) -> scalebench_binding::BindingError {
    let w = super::workload(&[("table", "tls_refused")]);
    match open(&super::config(url, &w, &[], true, false)) {
        Ok(_) => panic!("{url} opened"),
        Err(e) => e,
    }
}

/// Opening `url`, whose CA did not sign the server's certificate, fails as a refused connection
/// does, in one line naming the check and its cause, and never with `password` in it.
pub fn assert_refuses_another_ca<F: scalebench_binding::BindingFactory>(
    open: impl Fn(&scalebench_binding::BindingConfig) -> Result<F, scalebench_binding::BindingError>,
    url: &str,
    password: Option<&str>,
) {
    let e = open_error(open, url);
    assert!(
        matches!(e, scalebench_binding::BindingError::Connect { .. }),
        "{e}"
    );
    let e = e.to_string();
    assert_names_certificate_verification(&e);
    assert!(e.contains("UnknownIssuer"), "{e}");
    if let Some(p) = password {
        assert!(!e.contains(p), "password leaked: {e}");
    }
}
