// One JVM for all of a scalebench process's nodetool commands. Starting a JVM per command costs about
// a second of CPU, taken from the Cassandra nodes on the same machine: a 4-node restore imports on
// every node, a load flushes and compacts every node. This program reads one command per line on
// stdin (arguments separated by tabs, as `nodetool` takes them, `-h HOST -p PORT` included), runs
// it with Cassandra's own NodeTool, and answers on stdout with a header line
// "<exit code> <stdout bytes> <stderr bytes>" followed by the command's two outputs. It exits when
// stdin closes (its scalebench process ended). A command that calls System.exit ends the JVM with
// its exit code; scalebench then runs that command in a JVM of its own to show its output.
//
// Compiled by scalebench with the JDK's javac against the cluster's classpath (cassandra-all from
// Maven Central) into its per-user cache.

import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import org.apache.cassandra.tools.INodeProbeFactory;
import org.apache.cassandra.tools.NodeProbe;
import org.apache.cassandra.tools.NodeTool;
import org.apache.cassandra.tools.Output;

public final class NodetoolSession {
    public static void main(String[] args) throws IOException {
        // The replies go to the process's real stdout; everything printed meanwhile (the command's
        // output, its log lines) to the buffers, replaced before any Cassandra class is loaded.
        OutputStream reply = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out));
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream toOut = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream toErr = new PrintStream(err, true, StandardCharsets.UTF_8);
        System.setOut(toOut);
        System.setErr(toErr);
        BufferedReader commands =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = commands.readLine()) != null; ) {
            int code;
            try {
                code = new NodeTool(new Probes(), new Output(toOut, toErr))
                        .execute(line.split("\t", -1));
            } catch (Throwable t) {
                t.printStackTrace(toErr);
                code = 1;
            }
            toOut.flush();
            toErr.flush();
            byte[] o;
            byte[] e;
            synchronized (out) {
                o = out.toByteArray();
                out.reset();
            }
            synchronized (err) {
                e = err.toByteArray();
                err.reset();
            }
            reply.write((code + " " + o.length + " " + e.length + "\n")
                    .getBytes(StandardCharsets.UTF_8));
            reply.write(o);
            reply.write(e);
            reply.flush();
        }
        // JMX client threads must not keep the JVM alive once scalebench has gone.
        System.exit(0);
    }

    /** NodeTool's own factory is package-private: the same two constructors. */
    static final class Probes implements INodeProbeFactory {
        public NodeProbe create(String host, int port) throws IOException {
            return new NodeProbe(host, port);
        }

        public NodeProbe create(String host, int port, String user, String password)
                throws IOException {
            return new NodeProbe(host, port, user, password);
        }
    }
}
