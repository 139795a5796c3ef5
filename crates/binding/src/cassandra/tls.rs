//! Cassandra client encryption as cqlsh takes it: `ssl=true` (cqlsh's `--ssl`; `tls=true` too),
//! the CA in `certfile` (cqlshrc's `[ssl] certfile`, the `SSL_CERTFILE` variable; `cacert` too),
//! `validate` (`[ssl] validate`, `SSL_VALIDATE`; true by default) and a client certificate in
//! `usercert` and `userkey` (`[ssl] usercert`, `userkey`; `cert` and `key` too), here URL query
//! parameters. A TLS file parameter alone turns TLS on, as etcdctl's do.
//!
//! cqlsh's `validate = true` checks the chain and that the certificate names the node; the scylla
//! driver names each node by the address it connects to (the contact points' and the peers' rpc
//! addresses), so the node's certificate must hold that IP address. `validate=ca` checks the chain
//! alone (for certificates that name host names only); `validate=false` encrypts without checking.
//! The session runs on the shared rustls stack (ring, [`crate::tls`]).

use std::path::PathBuf;
use std::sync::Arc;

use crate::tls::{TlsSettings, Verify};
use crate::BindingError;

/// The URL's TLS parameters: cqlsh's names and those of the other bindings.
const PARAMETERS: [&str; 9] = [
    "ssl", "tls", "certfile", "cacert", "validate", "usercert", "cert", "userkey", "key",
];

/// The rustls configuration the URL's parameters (and cqlsh's `SSL_CERTFILE` and `SSL_VALIDATE`,
/// where the URL leaves them out) ask for; None: plain text. `env` looks up a variable.
pub fn from_url(
    url: &url::Url,
    describe: &str,
    env: impl Fn(&str) -> Option<String>,
) -> Result<Option<Arc<rustls::ClientConfig>>, BindingError> {
    let bad =
        |why: String| BindingError::Config(format!("invalid database URL '{describe}': {why}"));
    let (rest, given) = crate::tls::take_parameters(url, &PARAMETERS);
    // A misspelt parameter would otherwise leave the session in plain text without a word.
    if let Some((k, _)) = rest.query_pairs().next() {
        return Err(bad(format!(
            "unknown parameter '{k}': cassandra:// takes {}",
            PARAMETERS.join(", ")
        )));
    }
    let pick = |names: [&str; 2]| {
        let [a, b] = names;
        match (given.get(a), given.get(b)) {
            (Some(_), Some(_)) => Err(bad(format!(
                "'{a}' and '{b}' are the same parameter: give one"
            ))),
            (Some(v), None) | (None, Some(v)) => Ok(Some(v.clone())),
            (None, None) => Ok(None),
        }
    };
    let file = |names: [&str; 2]| -> Result<Option<PathBuf>, BindingError> {
        Ok(pick(names)?.filter(|v| !v.is_empty()).map(PathBuf::from))
    };
    let ca = file(["certfile", "cacert"])?;
    let client = (file(["usercert", "cert"])?, file(["userkey", "key"])?);
    let on = match pick(["ssl", "tls"])?.as_deref() {
        None => ca.is_some() || client.0.is_some() || client.1.is_some(),
        Some("" | "true") => true,
        Some("false") => false,
        Some(other) => return Err(bad(format!("ssl='{other}': expected true or false"))),
    };
    if !on {
        if let Some(k) = ["validate", "certfile", "cacert", "usercert", "cert", "userkey", "key"]
            .iter()
            .find(|k| given.contains_key(**k))
        {
            return Err(bad(format!("'{k}' is a TLS parameter, and ssl=false")));
        }
        return Ok(None);
    }
    let validate = match given.get("validate").cloned().or_else(|| env("SSL_VALIDATE")) {
        None => Verify::Full,
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "" | "true" => Verify::Full,
            "ca" => Verify::Ca,
            "false" => Verify::Nothing,
            other => {
                return Err(bad(format!(
                    "validate='{other}': expected true, ca or false"
                )))
            }
        },
    };
    let mut settings = TlsSettings::new(validate);
    let env_ca = || env("SSL_CERTFILE").filter(|v| !v.is_empty());
    settings.ca_file = ca.or_else(|| env_ca().map(PathBuf::from));
    settings.client_cert = match client {
        (None, None) => None,
        (Some(cert), Some(key)) => Some((cert, key)),
        _ => return Err(bad("'usercert' and 'userkey' go together".into())),
    };
    settings.client_config().map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(
        url: &str,
        env: &[(&str, &str)],
    ) -> Result<Option<Arc<rustls::ClientConfig>>, BindingError> {
        let env: HashMap<String, String> =
            env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        from_url(&url::Url::parse(url).unwrap(), url, |k| env.get(k).cloned())
    }

    #[test]
    fn cqlsh_names_turn_tls_on_and_plain_stays_plain() {
        assert!(parse("cassandra://h:9042/ks", &[]).unwrap().is_none());
        assert!(parse("cassandra://h:9042/ks?ssl=true", &[]).unwrap().is_some());
        assert!(parse("cassandra://h:9042/ks?tls", &[]).unwrap().is_some());
        assert!(parse("cassandra://h:9042/ks?ssl=true&validate=false", &[]).unwrap().is_some());
        // cqlsh's variables apply only when TLS is asked for.
        let env = [("SSL_CERTFILE", "/nowhere.pem")];
        assert!(parse("cassandra://h:9042/ks", &env).unwrap().is_none());
    }

    #[test]
    fn bad_values_and_files_are_named() {
        let e = |url: &str, env: &[(&str, &str)]| parse(url, env).err().unwrap().to_string();
        let m = e("cassandra://h/ks?certfile=/nowhere/ca.pem", &[]);
        assert!(m.contains("/nowhere/ca.pem"), "{m}");
        let m = e("cassandra://h/ks?ssl=true", &[("SSL_CERTFILE", "/nowhere/env.pem")]);
        assert!(m.contains("/nowhere/env.pem"), "{m}");
        let m = e("cassandra://h/ks?ssl=yes", &[]);
        assert!(m.contains("ssl='yes'"), "{m}");
        let m = e("cassandra://h/ks?ssl=true&validate=maybe", &[]);
        assert!(m.contains("validate='maybe'"), "{m}");
        let m = e("cassandra://h/ks?ssl=true", &[("SSL_VALIDATE", "sometimes")]);
        assert!(m.contains("validate='sometimes'"), "{m}");
        let m = e("cassandra://h/ks?usercert=/c.pem", &[]);
        assert!(m.contains("go together"), "{m}");
        let m = e("cassandra://h/ks?ssl=false&certfile=/ca.pem", &[]);
        assert!(m.contains("'certfile' is a TLS parameter"), "{m}");
        let m = e("cassandra://h/ks?certfile=/a.pem&cacert=/b.pem", &[]);
        assert!(m.contains("give one"), "{m}");
    }

    #[test]
    fn an_unknown_parameter_is_refused() {
        let m = parse("cassandra://h/ks?sslmode=require", &[]).err().unwrap().to_string();
        assert!(m.contains("unknown parameter 'sslmode'"), "{m}");
    }
}
