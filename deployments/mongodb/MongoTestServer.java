// A MongoDB wire-protocol server for scalebench's tests: mongo-java-server with its H2 backend,
// persisted in one MVStore file, announcing MongoDB 5.0 (wire version 13) because current drivers
// refuse the 4.0 it announces by default. Run by the JDK's source launcher:
//   java -cp CLASSPATH MongoTestServer.java HOST PORT FILE
// It is not MongoDB: write concern is accepted, not enforced; no replica sets, no sharding.

import de.bwaldvogel.mongo.MongoServer;
import de.bwaldvogel.mongo.MongoVersion;
import de.bwaldvogel.mongo.backend.h2.H2Backend;

import java.util.List;

public class MongoTestServer {
    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: MongoTestServer HOST PORT FILE");
            System.exit(2);
        }
        String host = args[0];
        int port = Integer.parseInt(args[1]);
        H2Backend backend = new H2Backend(args[2]);
        backend.version(new MongoVersion() {
            public List<Integer> getVersionArray() {
                return List.of(5, 0, 0);
            }

            public String toVersionString() {
                return "5.0.0";
            }

            public int getWireVersion() {
                return 13;
            }
        });
        MongoServer server = new MongoServer(backend);
        // Stopping (SIGTERM) closes the backend, which writes the MVStore file out.
        Runtime.getRuntime().addShutdownHook(new Thread(server::shutdownNow));
        server.bind(host, port);
        System.out.println("mongo-java-server listening on " + host + ":" + port);
    }
}
