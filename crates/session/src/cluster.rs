//! The deployment a `load`, `run`, elastic run or experiment goes to.

use std::path::Path;

use scalebench_deploy::{Cluster, DeployError, Deployment};

use crate::error::SessionError;

impl From<DeployError> for SessionError {
    fn from(e: DeployError) -> Self {
        match e {
            DeployError::BadSpec { .. } | DeployError::BadInput(_) => {
                SessionError::Usage(e.to_string())
            }
            DeployError::Interrupted(_) => SessionError::Interrupted(e.to_string()),
            other => SessionError::Failed(other.to_string()),
        }
    }
}

/// The running cluster of deployment file `deployment`, whose state is under `clusters_dir`.
pub fn open(deployment: &Path, clusters_dir: &Path) -> Result<Cluster, SessionError> {
    let c = open_as_recorded(deployment, clusters_dir)?;
    if let Some(why) = c.up_failed() {
        return Err(SessionError::Failed(format!(
            "cluster {} did not come up ({why}): bring it up again with `scalebench cluster up {}`",
            c.name(),
            deployment.display()
        )));
    }
    Ok(c)
}

/// The cluster as its state records it, also one whose `up` failed (so that it can be stopped).
pub fn open_as_recorded(deployment: &Path, clusters_dir: &Path) -> Result<Cluster, SessionError> {
    let d = Deployment::from_file(deployment)?;
    Ok(Cluster::open(&Cluster::dir_for(clusters_dir, &d))?)
}
