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
    serving(open_as_recorded(deployment, clusters_dir)?, deployment)
}

/// [`open`] for a command that changes the cluster (an elastic run): its lock held by the handle
/// (refused, exit 2, while another command holds it).
pub fn open_to_change(deployment: &Path, clusters_dir: &Path) -> Result<Cluster, SessionError> {
    serving(
        open_as_recorded_to_change(deployment, clusters_dir)?,
        deployment,
    )
}

fn serving(c: Cluster, deployment: &Path) -> Result<Cluster, SessionError> {
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

/// [`open_as_recorded`] with the cluster's lock held by the handle (`cluster down`, `add-node`, ...).
pub fn open_as_recorded_to_change(
    deployment: &Path,
    clusters_dir: &Path,
) -> Result<Cluster, SessionError> {
    let d = Deployment::from_file(deployment)?;
    Ok(Cluster::open_to_change(&Cluster::dir_for(
        clusters_dir,
        &d,
    ))?)
}
