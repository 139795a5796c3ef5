//! The deployment each run uses, as planned: the database's, or one derived for its
//! configuration or swept cluster size.

use std::path::{Path, PathBuf};

use scalebench_deploy::Deployment;
use scalebench_session::error::SessionError;

use super::spec::{Configuration, Experiment, PlannedRun, CLUSTER_SIZE};

/// The deployment a run uses, as planned (nothing written): the database's file, and, when the
/// configuration or a swept cluster size changes it, the derived deployment with the name of the
/// file it is written to.
pub(super) struct PlannedDeployment {
    file: PathBuf,
    derived: Option<(Deployment, String)>,
}

impl PlannedDeployment {
    pub(super) fn of(
        exp: &Experiment,
        base: &Path,
        run: &PlannedRun,
    ) -> Result<Option<Self>, SessionError> {
        let db = exp
            .databases
            .iter()
            .find(|d| d.name == run.database)
            .expect("planned");
        let Some(file) = &db.deployment else {
            return Ok(None);
        };
        let file = base.join(file);
        let config = exp
            .configurations
            .iter()
            .find(|c| c.name == run.configuration)
            .cloned()
            .unwrap_or_else(|| Configuration {
                name: "default".into(), // the implicit default configuration
                ..Default::default()
            });
        // Configurations that only set properties run on the same cluster (the database's own
        // settings apply to all of them).
        let own_deployment = !config.server.is_empty() || !config.deployment.is_empty();
        let mut config = Experiment::with_database_settings(db, &config);
        // A swept cluster size is one more deployment key.
        let size = run.params.nodes();
        if let Some(n) = size {
            config
                .deployment
                .insert(CLUSTER_SIZE.into(), toml::Value::Integer(n));
        }
        if config.server.is_empty() && config.deployment.is_empty() {
            return Ok(Some(PlannedDeployment {
                file,
                derived: None,
            }));
        }
        let d = Experiment::derived_deployment(&Deployment::from_file(&file)?, &config)
            .map_err(SessionError::Usage)?;
        let name = format!(
            "{}{}{}.toml",
            d.name,
            if own_deployment {
                format!("-{}", config.name)
            } else {
                String::new()
            },
            size.map_or(String::new(), |n| format!("-{n}-nodes"))
        );
        Ok(Some(PlannedDeployment {
            file,
            derived: Some((d, name)),
        }))
    }

    /// The deployment as the cluster will run it.
    pub(super) fn deployment(&self) -> Result<Deployment, SessionError> {
        match &self.derived {
            Some((d, _)) => Ok(d.clone()),
            None => Ok(Deployment::from_file(&self.file)?),
        }
    }
}

/// The deployment file a run uses: the database's, with the configuration's server settings merged
/// (written beside the clusters when there are any).
pub(super) fn deployment_for(
    exp: &Experiment,
    base: &Path,
    run: &PlannedRun,
    clusters_dir: &Path,
) -> Result<Option<PathBuf>, SessionError> {
    let Some(planned) = PlannedDeployment::of(exp, base, run)? else {
        return Ok(None);
    };
    let Some((d, name)) = planned.derived else {
        return Ok(Some(planned.file));
    };
    let derived = clusters_dir.join("deployments").join(name);
    std::fs::create_dir_all(derived.parent().unwrap())
        .map_err(|e| SessionError::Failed(e.to_string()))?;
    let text = toml::to_string(&d).map_err(|e| SessionError::Failed(e.to_string()))?;
    // An external deployment's URL may carry a password.
    scalebench_session::files::write_private(&derived, &text)?;
    Ok(Some(derived))
}
