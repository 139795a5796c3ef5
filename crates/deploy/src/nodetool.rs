//! `nodetool`, Cassandra's administration tool, run in one JVM kept for the whole scalebench
//! process (`deployments/cassandra/NodetoolSession.java`) instead of a JVM per command: a JVM start
//! costs about a second of CPU, taken from the nodes on the same machine, and an experiment that
//! restores a 4-node ring before each run ran hundreds of them. Without a JDK compiler (`javac`),
//! or when the session cannot answer, each command runs in a JVM of its own as before.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::maven::{cache_dir, hex_hash, unique_suffix, write_whole};
use crate::process::{run, DeployError};

const SESSION_SOURCE: &str = include_str!("../../../deployments/cassandra/NodetoolSession.java");
const SESSION_CLASS: &str = "NodetoolSession";

/// Runs `nodetool -h 127.0.0.1 -p JMX_PORT ARGS...` on the cluster's classpath; its output.
pub fn nodetool(classpath: &str, jmx_port: u16, args: &[&str]) -> Result<String, DeployError> {
    let port = jmx_port.to_string();
    let mut argv = vec!["-h", "127.0.0.1", "-p", port.as_str()];
    argv.extend_from_slice(args);
    let what = format!("nodetool {}", args.join(" "));
    let Some(mut session) = Session::take(classpath) else {
        return one_off(classpath, &argv, &what);
    };
    match session.execute(&argv) {
        Ok((code, text)) => {
            Session::put_back(session);
            if code == 0 {
                Ok(text)
            } else {
                Err(failed(&what, &format!("exit status: {code}"), &text))
            }
        }
        // The JVM ended during the command (a command that calls System.exit, or a crash): its
        // output went with it, so the command runs again on its own to say what happened.
        Err(_) => one_off(classpath, &argv, &what),
    }
}

fn failed(what: &str, status: &str, text: &str) -> DeployError {
    DeployError::Failed(format!("{what} failed ({status}): {}", text.trim()))
}

/// The JVM options every nodetool JVM takes: the module openings Cassandra's classes need on
/// JDK 17 (as for the server), a small heap, and logging at WARN to stderr.
fn java(classpath: &str) -> Result<Command, DeployError> {
    // Without a configuration, logback prints the tool's DEBUG lines. Kept in the per-user cache,
    // written anew unless it holds exactly our configuration (never trusted from a shared directory).
    let quiet = cache_dir()?.join("nodetool-logback.xml");
    if std::fs::read_to_string(&quiet).ok().as_deref() != Some(TOOL_LOGBACK) {
        write_whole(&quiet, TOOL_LOGBACK)?;
    }
    let mut cmd = Command::new("java");
    cmd.args(
        crate::cassandra::JVM_FLAGS
            .iter()
            .filter(|f| f.starts_with("--add-")),
    )
    .args([
        "-Xmx128m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",
        &format!("-Dlogback.configurationFile=file://{}", quiet.display()),
        "-cp",
        classpath,
    ]);
    Ok(cmd)
}

/// One command in a JVM of its own.
fn one_off(classpath: &str, argv: &[&str], what: &str) -> Result<String, DeployError> {
    run(
        java(classpath)?
            .arg("org.apache.cassandra.tools.NodeTool")
            .args(argv),
        what,
    )
}

/// A running NodetoolSession JVM on one classpath.
struct Session {
    classpath: String,
    child: Child,
    commands: ChildStdin,
    replies: BufReader<ChildStdout>,
}

/// Sessions not running a command, to be reused; a command that finds none idle starts one (two
/// threads may run nodetool at once: a long decommission beside a status check).
static IDLE: Mutex<Vec<Session>> = Mutex::new(Vec::new());

impl Session {
    fn take(classpath: &str) -> Option<Session> {
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = idle.iter().position(|s| s.classpath == classpath) {
            return Some(idle.swap_remove(i));
        }
        drop(idle);
        Session::start(classpath).ok()
    }

    fn put_back(session: Session) {
        IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(session);
    }

    fn start(classpath: &str) -> Result<Session, DeployError> {
        let classes = compiled(classpath)?;
        let full = format!("{}:{classpath}", classes.display());
        let mut child = java(&full)?
            .arg(SESSION_CLASS)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| DeployError::Spawn {
                program: "java (nodetool session)".into(),
                reason: e.to_string(),
            })?;
        let commands = child.stdin.take().expect("piped stdin");
        let replies = BufReader::new(child.stdout.take().expect("piped stdout"));
        Ok(Session {
            classpath: classpath.to_string(),
            child,
            commands,
            replies,
        })
    }

    /// The command's exit code and its output (stdout, then stderr); an error if the JVM ended.
    fn execute(&mut self, argv: &[&str]) -> std::io::Result<(i32, String)> {
        if argv.iter().any(|a| a.contains(['\t', '\n'])) {
            return Err(std::io::Error::other("argument with a tab or newline"));
        }
        writeln!(self.commands, "{}", argv.join("\t"))?;
        self.commands.flush()?;
        let mut header = String::new();
        if self.replies.read_line(&mut header)? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        let mut fields = header.split_whitespace().map(str::parse::<i64>);
        let mut next = || -> std::io::Result<i64> {
            fields
                .next()
                .and_then(Result::ok)
                .ok_or_else(|| std::io::Error::other(format!("bad reply header {header:?}")))
        };
        let (code, out_len, err_len) = (next()?, next()?, next()?);
        let mut body = vec![0u8; (out_len + err_len) as usize];
        self.replies.read_exact(&mut body)?;
        Ok((code as i32, String::from_utf8_lossy(&body).into_owned()))
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A session dropped mid-way (its JVM ended, or a failed reply): no JVM left behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The session's classes, compiled once per source and classpath into the per-user cache; an
/// error when no compiler can make them (remembered: every command then runs on its own).
fn compiled(classpath: &str) -> Result<PathBuf, DeployError> {
    static UNAVAILABLE: OnceLock<String> = OnceLock::new();
    if let Some(why) = UNAVAILABLE.get() {
        return Err(DeployError::Failed(why.clone()));
    }
    let dir = cache_dir()?.join(format!(
        "nodetool-session-{}",
        hex_hash(&format!("{SESSION_SOURCE}\n{classpath}"))
    ));
    if dir.join(format!("{SESSION_CLASS}.class")).is_file() {
        return Ok(dir);
    }
    compile(classpath, &dir).inspect_err(|e| {
        let _ = UNAVAILABLE.set(e.to_string());
    })?;
    Ok(dir)
}

/// javac into a directory of this process's own, renamed into place whole (another process may
/// compile the same at the same time).
fn compile(classpath: &str, dir: &Path) -> Result<(), DeployError> {
    let parent = dir.parent().expect("a cache subdirectory");
    let work = parent.join(format!(".nodetool-session-{}", unique_suffix()));
    std::fs::create_dir_all(&work).map_err(|e| DeployError::io(&work, e))?;
    let source = work.join(format!("{SESSION_CLASS}.java"));
    let result = write_whole(&source, SESSION_SOURCE).and_then(|()| {
        run(
            Command::new("javac")
                .args(["-nowarn", "-d"])
                .arg(&work)
                .args(["-cp", classpath])
                .arg(&source),
            "javac NodetoolSession.java",
        )
        .map(drop)
    });
    if result.is_ok() && std::fs::rename(&work, dir).is_err() && !dir.is_dir() {
        let _ = std::fs::remove_dir_all(&work);
        return Err(DeployError::Failed(format!(
            "cannot move the compiled nodetool session to {}",
            dir.display()
        )));
    }
    let _ = std::fs::remove_dir_all(&work);
    result
}

const TOOL_LOGBACK: &str = r#"<configuration>
  <appender name="STDERR" class="ch.qos.logback.core.ConsoleAppender">
    <target>System.err</target>
    <encoder><pattern>%-5level %msg%n</pattern></encoder>
  </appender>
  <root level="WARN"><appender-ref ref="STDERR" /></root>
</configuration>
"#;
