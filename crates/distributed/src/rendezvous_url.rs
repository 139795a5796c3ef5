//! `--rendezvous etcd://HOST:PORT[,HOST:PORT]/PREFIX`: where the clients of a distributed run meet
//! (the meeting itself is [`crate::etcd`]). A build without the `etcd` feature (README command 1,
//! `--features embedded`) has no etcd client: it refuses every rendezvous here, with the build that
//! has one, before anything starts.

use scalebench_session::error::SessionError;

/// The one line a rendezvous gets from a build without the etcd client.
pub const NEEDS_ETCD: &str = "--rendezvous needs the etcd client, which this build leaves out \
    (--features embedded): use the full build (README command 2, or cargo feature `rendezvous`)";

/// Where the clients of one run meet: `etcd://HOST:PORT[,HOST:PORT]/PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RendezvousUrl {
    pub endpoints: Vec<String>,
    pub prefix: String,
}

impl RendezvousUrl {
    pub fn parse(text: &str) -> Result<RendezvousUrl, SessionError> {
        if !cfg!(feature = "etcd") {
            return Err(SessionError::Usage(NEEDS_ETCD.into()));
        }
        // A password in the URL is never repeated.
        let shown = match text.rsplit_once('@') {
            Some((_, hosts)) => format!("etcd://***@{hosts}"),
            None => text.to_string(),
        };
        let bad = |why: &str| {
            SessionError::Usage(format!(
                "invalid value '{shown}' for '--rendezvous': {why} (expected etcd://HOST:PORT[,HOST:PORT]/PREFIX)"
            ))
        };
        let rest = text
            .strip_prefix("etcd://")
            .ok_or_else(|| bad("the rendezvous is an etcd URL"))?;
        let (hosts, prefix) = rest
            .split_once('/')
            .ok_or_else(|| bad("a prefix naming the run is needed"))?;
        if prefix.trim_matches('/').is_empty() {
            return Err(bad("a prefix naming the run is needed"));
        }
        if hosts.contains('@') {
            return Err(bad("etcd users and passwords are not supported"));
        }
        let endpoints: Vec<String> = hosts
            .split(',')
            .map(|h| {
                let (host, port) = h
                    .rsplit_once(':')
                    .ok_or_else(|| bad("each host needs a port"))?;
                if host.is_empty() || port.parse::<u16>().is_err() {
                    return Err(bad(&format!("'{h}' is not HOST:PORT")));
                }
                Ok(format!("http://{h}"))
            })
            .collect::<Result<_, _>>()?;
        Ok(RendezvousUrl {
            endpoints,
            prefix: format!("/{}", prefix.trim_matches('/')),
        })
    }

    pub fn display(&self) -> String {
        let hosts: Vec<&str> = self
            .endpoints
            .iter()
            .map(|e| e.trim_start_matches("http://"))
            .collect();
        format!("etcd://{}{}", hosts.join(","), self.prefix)
    }

    /// Where run `k` of a series meets.
    pub fn series_run(&self, k: u32) -> RendezvousUrl {
        RendezvousUrl {
            endpoints: self.endpoints.clone(),
            prefix: format!("{}/run-{k}", self.prefix),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(feature = "etcd")]
    fn urls_name_hosts_and_a_prefix() {
        let u = RendezvousUrl::parse("etcd://10.0.0.1:2379,10.0.0.2:2379/bench/run-7/").unwrap();
        assert_eq!(
            u.endpoints,
            ["http://10.0.0.1:2379", "http://10.0.0.2:2379"]
        );
        assert_eq!(u.prefix, "/bench/run-7");
        assert_eq!(
            u.display(),
            "etcd://10.0.0.1:2379,10.0.0.2:2379/bench/run-7"
        );
        for bad in [
            "redis://h:1/x",
            "etcd://h:1",
            "etcd://h:1/",
            "etcd://h/x",
            "etcd://h:port/x",
            "etcd://u:secret@h:1/x",
        ] {
            let e = RendezvousUrl::parse(bad).unwrap_err().to_string();
            assert!(e.contains("--rendezvous") && !e.contains("secret"), "{e}");
            assert!(e.contains(bad) || bad.contains('@'), "{e}");
        }
    }
}
