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
