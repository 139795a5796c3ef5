use std::process::ExitCode;

fn main() -> ExitCode {
    scalebench::cli::main(std::env::args_os().collect())
}
