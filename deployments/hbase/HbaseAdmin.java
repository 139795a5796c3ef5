// scalebench's admin tool for its local HBase clusters, on HBase's own client (Admin API): what the
// Thrift gateway cannot do. Run by the JDK's source launcher with the cluster's conf directory first
// on the classpath:  java -cp CONF:CLASSPATH HbaseAdmin.java COMMAND [PORT]
//   balance P       waits until the region server on 127.0.0.1:P serves, runs the balancer, then
//                   moves onto it a region of each user table it holds none of (120 s at most)
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
import org.apache.hadoop.hbase.client.RegionInfo;

import java.util.ArrayList;
import java.util.List;

public class HbaseAdmin {
    public static void main(String[] args) throws Exception {
        if (args.length == 0) {
            System.err.println("usage: HbaseAdmin balance PORT|decommission PORT|stop PORT|flush|compact");
            System.exit(2);
        }
        try (Connection connection = ConnectionFactory.createConnection(HBaseConfiguration.create());
             Admin admin = connection.getAdmin()) {
            switch (args[0]) {
                case "balance": balance(admin, Integer.parseInt(args[1])); break;
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

    private static void balance(Admin admin, int port) throws Exception {
        long deadline = System.currentTimeMillis() + 120_000;
        // A region server just started registers with the master a few seconds later.
        ServerName added = null;
        while (added == null) {
            for (ServerName s : serving(admin)) {
                if (s.getPort() == port) {
                    added = s;
                }
            }
            if (added == null && System.currentTimeMillis() > deadline) {
                throw new IllegalStateException("no region server on port " + port
                        + " registered with the master after 120 s");
            }
            Thread.sleep(250);
        }
        admin.balancerSwitch(true, true);
        admin.balance();
        // The balancer counts all regions alike: the new server may get only hbase:meta or
        // hbase:namespace. It gets a region of each user table that has one to spare.
        for (TableName table : admin.listTableNames()) {
            List<ServerName> servers = serving(admin);
            if (admin.getRegions(table).size() < servers.size() || holds(admin, added, table)) {
                continue;
            }
            ServerName fullest = null;
            List<RegionInfo> most = List.of();
            for (ServerName s : servers) {
                List<RegionInfo> mine = new ArrayList<>();
                for (RegionInfo r : admin.getRegions(s)) {
                    if (r.getTable().equals(table)) {
                        mine.add(r);
                    }
                }
                if (mine.size() > most.size()) {
                    fullest = s;
                    most = mine;
                }
            }
            if (fullest == null || most.size() < 2) {
                continue;
            }
            admin.move(most.get(0).getEncodedNameAsBytes(), added);
            while (!holds(admin, added, table)) {
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(added + " holds no region of " + table + " after 120 s");
                }
                Thread.sleep(200);
            }
        }
    }

    private static boolean holds(Admin admin, ServerName server, TableName table) throws Exception {
        for (RegionInfo r : admin.getRegions(server)) {
            if (r.getTable().equals(table)) {
                return true;
            }
        }
        return false;
    }

    /** Live region servers that are not decommissioned. */
    private static List<ServerName> serving(Admin admin) throws Exception {
        List<ServerName> out = new ArrayList<>(admin.getRegionServers());
        out.removeAll(admin.listDecommissionedRegionServers());
        return out;
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
