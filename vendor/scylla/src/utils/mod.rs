#[cfg(test)]
pub(crate) mod test_utils;

pub(crate) mod safe_format;
