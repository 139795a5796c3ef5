//! What a binding makes of a workload, decided before anything connects: the key_value
//! alternatives that run in place of the statements it has no text for, and what of the
//! workload it leaves out (warned about).

use scalebench_binding::{registry, BindingInfo, DbUrl};
use scalebench_workload::{CoreWorkload, Properties};

use crate::error::SessionError;

/// The workload's operations as they run on `binding` (`props`' `operations` rewritten where a
/// key_value alternative runs), and a line for each alternative that runs.
pub(crate) fn run_alternatives(
    props: &mut Properties,
    binding: &BindingInfo,
) -> Result<Vec<String>, SessionError> {
    Ok(scalebench_workload::alternative::apply(
        props,
        registry::store(binding),
        binding.name,
    )?)
}

/// [`run_alternatives`] on the binding of database URL `db`, where it names one of this build.
pub(crate) fn alternatives_of_url(
    props: &mut Properties,
    db: Option<&str>,
) -> Result<(), SessionError> {
    let binding = db
        .and_then(|url| DbUrl::parse(url).ok())
        .and_then(|url| registry::for_scheme(url.scheme()));
    if let Some(binding) = binding {
        run_alternatives(props, &binding)?;
    }
    Ok(())
}

/// What `binding` leaves out of `workload`: secondary indexes it keeps none of, a key column
/// where it keeps records by their key alone.
pub(crate) fn left_out(workload: &CoreWorkload, binding: &BindingInfo) -> Vec<String> {
    let mut warnings = Vec::new();
    if binding.stores_data && !binding.secondary_indexes {
        for ix in workload.indexes.iter() {
            warnings.push(format!(
                "{} keeps no secondary index: index '{}' of the workload is not created (its operations are measured without one)",
                binding.name, ix.name
            ));
        }
    }
    if let (Some(k), true, None) = (
        &workload.key_column,
        binding.stores_data,
        binding.statements,
    ) {
        warnings.push(format!(
            "{} keeps records by their key alone: the workload's key column '{k}' names the key's column in SQL and CQL tables only",
            binding.name
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use scalebench_exec::Phase;

    use crate::error::SessionError;
    use crate::request::RunRequest;
    use crate::settings::Settings;

    /// A statement that writes, with an update as its key_value alternative: on SQLite the
    /// statement runs, and `--verify-writes` refuses it (what the SQL wrote is unknown); on Redis
    /// the update runs in its place, said once, and its writes are verified as any update's.
    /// Nothing connects.
    #[test]
    fn verify_writes_follows_what_runs_on_each_store() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("pay.toml");
        std::fs::write(
            &file,
            "[record]\ntable = \"orders\"\nrecords = 5\n\n[[record.column]]\nname = \"total\"\n\
             type = \"int\"\ngenerator.uniform = { min = 0, max = 9 }\n\n[[run.operation]]\n\
             name = \"pay\"\nkind = \"statement\"\nweight = 1\n\
             sql = \"UPDATE orders SET total = total + 1 WHERE YCSB_KEY = :key\"\n\
             key_value = { kind = \"update\", set = [\"total\"] }\n",
        )
        .unwrap();
        let mut request = RunRequest::new(file.to_str().unwrap());
        request.verify_writes = true;
        let sqlite = format!("sqlite://{}", dir.path().join("x.db").display());
        request.db = Some(sqlite);
        assert!(Settings::unverifiable_writes(&request)
            .unwrap()
            .is_some_and(|why| why.contains("operation 'pay'")));
        match Settings::checked(&request, None, Phase::Run) {
            Err(SessionError::Usage(e)) => assert!(e.contains("operation 'pay'"), "{e}"),
            other => panic!("{:?}", other.map(|s| s.alternatives)),
        }
        // Redis (not in this crate's test build: its operations as with_database rewrites them).
        let (mut props, _) = Settings::properties(&request, &[]).unwrap();
        let store = scalebench_workload::alternative::Store::KeyValue;
        let said = scalebench_workload::alternative::apply(&mut props, store, "redis").unwrap();
        assert_eq!(
            said,
            ["operation 'pay' runs as update on redis (its key_value alternative)"]
        );
        let on_redis = scalebench_workload::CoreWorkload::from_properties(&props).unwrap();
        assert_eq!(
            on_redis.named[0].0.kind,
            scalebench_workload::OpKind::Update
        );
        assert_eq!(scalebench_exec::written::unverifiable(&on_redis), None);
    }
}
