// A YCSB 0.17.0 database class for HBase on HBase 2.6.1's Java client (native RPC to the region
// servers, no gateway), standing in for YCSB's hbase2 binding (not on Maven Central) in
// bench/hbase.sh. Same data model and calls as that binding: one Connection shared by all client
// threads, a Table per thread, one row per record, one column per field in family `family`
// (property columnfamily), Get / Put / Scan with caching / Delete, durability from the table.
// Written for scalebench's benchmarks; not YCSB's code.

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;

public class YcsbHbase extends DB {
    private static Connection connection;
    private static int users;
    private Table table;
    private String tableName;
    private byte[] family;

    @Override
    public void init() throws DBException {
        family = Bytes.toBytes(getProperties().getProperty("columnfamily", "family"));
        synchronized (YcsbHbase.class) {
            try {
                if (connection == null) {
                    Configuration conf = HBaseConfiguration.create();
                    conf.set("hbase.zookeeper.quorum", "127.0.0.1");
                    conf.set("hbase.zookeeper.property.clientPort", getProperties().getProperty("hbase.zookeeper.port", "2181"));
                    connection = ConnectionFactory.createConnection(conf);
                }
                users++;
            } catch (Exception e) {
                throw new DBException(e);
            }
        }
    }

    @Override
    public void cleanup() throws DBException {
        try {
            if (table != null) {
                table.close();
            }
            synchronized (YcsbHbase.class) {
                if (--users == 0) {
                    connection.close();
                    connection = null;
                }
            }
        } catch (Exception e) {
            throw new DBException(e);
        }
    }

    private Table table(String name) throws Exception {
        if (table == null || !name.equals(tableName)) {
            table = connection.getTable(TableName.valueOf(name));
            tableName = name;
        }
        return table;
    }

    private void fill(Result r, Map<String, ByteIterator> result) {
        for (Cell c : r.listCells()) {
            result.put(Bytes.toString(CellUtil.cloneQualifier(c)), new ByteArrayByteIterator(CellUtil.cloneValue(c)));
        }
    }

    @Override
    public Status read(String t, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            Get g = new Get(Bytes.toBytes(key));
            if (fields == null) {
                g.addFamily(family);
            } else {
                for (String f : fields) {
                    g.addColumn(family, Bytes.toBytes(f));
                }
            }
            Result r = table(t).get(g);
            if (r.isEmpty()) {
                return Status.NOT_FOUND;
            }
            fill(r, result);
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status scan(String t, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        Scan s = new Scan().withStartRow(Bytes.toBytes(startkey)).setCaching(recordcount).setLimit(recordcount);
        if (fields == null) {
            s.addFamily(family);
        } else {
            for (String f : fields) {
                s.addColumn(family, Bytes.toBytes(f));
            }
        }
        try (ResultScanner scanner = table(t).getScanner(s)) {
            for (Result r : scanner) {
                HashMap<String, ByteIterator> row = new HashMap<>();
                fill(r, row);
                result.add(row);
                if (result.size() >= recordcount) {
                    break;
                }
            }
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status update(String t, String key, Map<String, ByteIterator> values) {
        try {
            Put p = new Put(Bytes.toBytes(key));
            for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
                p.addColumn(family, Bytes.toBytes(e.getKey()), e.getValue().toArray());
            }
            table(t).put(p);
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status insert(String t, String key, Map<String, ByteIterator> values) {
        return update(t, key, values);
    }

    @Override
    public Status delete(String t, String key) {
        try {
            table(t).delete(new Delete(Bytes.toBytes(key)));
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }
}
