//! etcd over TLS as etcdctl takes it: the URL parameters `cacert`, `cert` and `key` (etcdctl's
//! `--cacert`, `--cert`, `--key`) make every endpoint `https://`; `tls` alone does too, trusting
//! the public CAs (webpki-roots). tonic makes the session on rustls with ring and checks the chain
//! and the host name (it has no mode without: etcdctl's `--insecure-skip-tls-verify` is not taken).
//! The files are checked by [`crate::tls`] first, so a bad one is a configuration error naming it.

use std::path::PathBuf;

use etcd_client::{Certificate, Identity, TlsOptions};

use crate::BindingError;

/// The TLS options of `url`; None: plain `http://`.
pub fn from_url(url: &url::Url, describe: &str) -> Result<Option<TlsOptions>, BindingError> {
    let bad =
        |why: String| BindingError::Config(format!("invalid database URL '{describe}': {why}"));
    let given: std::collections::HashMap<_, _> = url.query_pairs().collect();
    let file = |k: &str| given.get(k).filter(|v| !v.is_empty()).map(|v| PathBuf::from(v.as_ref()));
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|e| bad(format!("TLS file '{}': {e}", path.display())))
    };
    let tls = match given.get("tls").map(|v| v.as_ref()) {
        None | Some("false") => ["cacert", "cert", "key"].iter().any(|k| given.contains_key(*k)),
        Some("" | "true") => true,
        Some(other) => return Err(bad(format!("tls='{other}': expected true or false"))),
    };
    if !tls {
        return Ok(None);
    }
    let mut options = TlsOptions::new();
    options = match file("cacert") {
        Some(ca) => {
            crate::tls::certificates(&ca)?;
            options.ca_certificate(Certificate::from_pem(read(&ca)?))
        }
        None => options.with_webpki_roots(),
    };
    match (file("cert"), file("key")) {
        (None, None) => {}
        (Some(cert), Some(key)) => {
            let mut check = crate::tls::TlsSettings::new(crate::tls::Verify::Nothing);
            check.client_cert = Some((cert.clone(), key.clone()));
            check.client_config()?;
            options = options.identity(Identity::from_pem(read(&cert)?, read(&key)?));
        }
        _ => return Err(bad("'cert' and 'key' go together".into())),
    }
    Ok(Some(options))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str) -> Result<Option<TlsOptions>, BindingError> {
        from_url(&url::Url::parse(url).unwrap(), url)
    }

    #[test]
    fn tls_parameters_make_the_endpoints_https() {
        assert!(parse("etcd://h:1").unwrap().is_none());
        assert!(parse("etcd://h:1?tls").unwrap().is_some());
        let e = parse("etcd://h:1?cacert=/nowhere/ca.pem").err().unwrap().to_string();
        assert!(e.contains("/nowhere/ca.pem"), "{e}");
        let e = parse("etcd://h:1?tls&cert=/c.pem").err().unwrap().to_string();
        assert!(e.contains("go together"), "{e}");
    }
}
