// scalebench's admin tool for its local HBase clusters, on HBase's own client (Admin API): what the
// Thrift gateway cannot do. Run by the JDK's source launcher with the cluster's conf directory first
// on the classpath:  java -cp CONF:CLASSPATH HbaseAdmin.java COMMAND [PORT]
//   balance         runs the balancer until every live region server holds a region (60 s at most)
//   decommission P  the region server on 127.0.0.1:P gets no new regions and its regions move away
//                   (Admin.decommissionRegionServers with offload); returns once it holds none
//   stop P          asks the region server on 127.0.0.1:P to stop (it closes its regions, then exits)
//   flush           flushes every user table (memstores written to store files, nothing compacted)
//   compact         flushes and major-compacts every user table
// Exit code 0 on success; 1 with the reason on standard error.

import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

import java.util.List;

public class HbaseAdmin {
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: HbaseAdmin balance|decommission PORT|stop PORT|flush|compact");
            System.exit(2);
        }
        try (Connection connection = ConnectionFactory.createConnection(HBaseConfiguration.create());
             Admin admin = connection.getAdmin()) {
            switch (args[0]) {
                case "balance": balance(admin); break;
                case "decommission": decommission(admin, server(admin, args)); break;
                case "stop": admin.stopRegionServer(server(admin, args).getAddress().toString()); break;
                case "flush": flush(admin); break;
                case "compact": compact(admin); break;
                default: throw new IllegalArgumentException("unknown command " + args[0]);
            }
        } catch (Exception e) {
            System.err.println(e.getClass().getSimpleName() + ": " + e.getMessage());
            System.exit(1);
        }
        // HBase's client leaves non-daemon threads behind.
        System.exit(0);
    }

    private static ServerName server(Admin admin, String[] args) throws Exception {
        int port = Integer.parseInt(args[1]);
        for (ServerName s : admin.getRegionServers()) {
            if (s.getPort() == port) {
                return s;
            }
        }
        throw new IllegalArgumentException("no live region server on port " + port);
    }

    private static void balance(Admin admin) throws Exception {
        admin.balancerSwitch(true, true);
        long deadline = System.currentTimeMillis() + 60_000;
        while (true) {
            boolean empty = false;
            for (ServerName s : admin.getRegionServers()) {
                if (admin.getRegions(s).isEmpty() && !admin.listDecommissionedRegionServers().contains(s)) {
                    empty = true;
                }
            }
            if (!empty) {
                return;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("a region server still holds no region after 60 s of balancing");
            }
            admin.balance();
            Thread.sleep(1000);
        }
    }

    private static void decommission(Admin admin, ServerName server) throws Exception {
        admin.decommissionRegionServers(List.of(server), true);
        long deadline = System.currentTimeMillis() + 300_000;
        while (!admin.getRegions(server).isEmpty()) {
            if (System.currentTimeMillis() > deadline) {
                throw new IllegalStateException(server + " still holds regions after 300 s");
            }
            Thread.sleep(200);
        }
    }

    private static void flush(Admin admin) throws Exception {
        for (TableName t : admin.listTableNames()) {
            admin.flush(t);
        }
    }

    private static void compact(Admin admin) throws Exception {
        for (TableName t : admin.listTableNames()) {
            admin.flush(t);
            admin.majorCompact(t);
        }
    }
}
