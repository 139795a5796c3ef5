//! `nodetool`, Cassandra's administration tool, run in one JVM kept for the whole scalebench
//! process (`deployments/cassandra/NodetoolSession.java`) instead of a JVM per command: a JVM start
//! costs about a second of CPU, taken from the nodes on the same machine, and an experiment that
//! restores a 4-node ring before each run ran hundreds of them. Without a JDK compiler (`javac`),
//! or when the session cannot answer, each command runs in a JVM of its own as before.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use crate::error::DeployError;
use crate::host::run;
use crate::maven::{cache_dir, hex_hash, unique_suffix, write_whole};

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
        // The JVM ended before it answered (a command that calls System.exit, NodeTool's way out
        // when it cannot connect): its output went with it, so the command runs again on its own
        // to say what happened. Such a command failed before doing anything.
        Err(Reply::None) => one_off(classpath, &argv, &what),
        // It answered in part, or not in our format: what the command did is unknown, so it is
        // not run again (an import would import twice).
        Err(Reply::Broken(e)) => Err(DeployError::Failed(format!(
            "{what}: the nodetool session broke off its answer ({e}); the command may have run"
        ))),
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

/// How a session failed to answer.
enum Reply {
    /// Nothing came back: the JVM ended (or never took the command).
    None,
    /// Part of an answer, or not one at all.
    Broken(String),
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
        // A session that could not start (a javac newer than the java that runs it, ...) is not
        // tried again by every command: each runs on its own.
        static CANNOT_START: OnceLock<()> = OnceLock::new();
        let mut idle = IDLE.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(i) = idle.iter().position(|s| s.classpath == classpath) {
            return Some(idle.swap_remove(i));
        }
        drop(idle);
        if CANNOT_START.get().is_some() {
            return None;
        }
        let started = Session::start(classpath).ok();
        if started.is_none() {
            let _ = CANNOT_START.set(());
        }
        started
    }

    fn put_back(session: Session) {
        IDLE.lock().unwrap_or_else(|e| e.into_inner()).push(session);
    }

    fn start(classpath: &str) -> Result<Session, DeployError> {
        let classes = compiled(classpath)?;
        let full = format!("{}:{classpath}", classes.display());
        let mut child = java(&full)?
            // The JVM's own warnings go to stdout unless told: they would break the replies.
            .arg("-Xlog:all=warning:stderr")
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

    /// The command's exit code and its output (stdout, then stderr).
    fn execute(&mut self, argv: &[&str]) -> Result<(i32, String), Reply> {
        // The session reads one command per line; Java's readLine also ends a line at '\r'.
        if argv.iter().any(|a| a.contains(['\t', '\n', '\r'])) {
            return Err(Reply::None);
        }
        let sent =
            writeln!(self.commands, "{}", argv.join("\t")).and_then(|()| self.commands.flush());
        if sent.is_err() {
            return Err(Reply::None);
        }
        let mut header = String::new();
        match self.replies.read_line(&mut header) {
            Ok(0) | Err(_) => return Err(Reply::None),
            Ok(_) => {}
        }
        let broken = |why: String| Reply::Broken(why);
        let fields: Vec<&str> = header.split_whitespace().collect();
        let [code, out_len, err_len] = fields[..] else {
            return Err(broken(format!("reply header {header:?}")));
        };
        let (Ok(code), Ok(out_len), Ok(err_len)) = (
            code.parse::<i32>(),
            out_len.parse::<u32>(),
            err_len.parse::<u32>(),
        ) else {
            return Err(broken(format!("reply header {header:?}")));
        };
        let mut body = vec![0u8; out_len as usize + err_len as usize];
        self.replies
            .read_exact(&mut body)
            .map_err(|e| broken(e.to_string()))?;
        Ok((code, String::from_utf8_lossy(&body).into_owned()))
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
