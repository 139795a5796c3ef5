// A YCSB 0.17.0 database class for MongoDB on the MongoDB Java sync driver, standing in for YCSB's
// mongodb-binding (not on Maven Central) in bench/mongodb.sh. Same data model and calls as that
// binding: one MongoClient shared by all client threads, one document per record (_id = key, each
// field a binary value), find by _id, updateOne with $set, range scans on _id sorted with a limit,
// insertOne, deleteOne; write concern w=1 unless mongodb.url says otherwise.
// Written for scalebench's benchmarks; not YCSB's code.

import com.mongodb.client.MongoClient;
import com.mongodb.client.MongoClients;
import com.mongodb.client.MongoCollection;
import com.mongodb.client.MongoCursor;
import com.mongodb.client.MongoDatabase;
import com.mongodb.client.model.Filters;
import com.mongodb.client.model.Projections;
import com.mongodb.client.model.Sorts;
import com.mongodb.client.result.DeleteResult;
import com.mongodb.client.result.UpdateResult;
import org.bson.Document;
import org.bson.conversions.Bson;
import org.bson.types.Binary;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.Vector;

public class YcsbMongoDb extends DB {
    private static MongoClient client;
    private static MongoDatabase database;
    private static int users;

    @Override
    public void init() throws DBException {
        synchronized (YcsbMongoDb.class) {
            if (client == null) {
                String url = getProperties().getProperty("mongodb.url", "mongodb://127.0.0.1:27017/ycsb?w=1");
                client = MongoClients.create(url);
                String db = url.replaceFirst("^mongodb://[^/]*/?", "").replaceFirst("\\?.*$", "");
                database = client.getDatabase(db.isEmpty() ? "ycsb" : db);
            }
            users++;
        }
    }

    @Override
    public void cleanup() throws DBException {
        synchronized (YcsbMongoDb.class) {
            if (--users == 0) {
                client.close();
                client = null;
            }
        }
    }

    private static MongoCollection<Document> collection(String table) {
        return database.getCollection(table);
    }

    private static Bson projection(Set<String> fields) {
        return fields == null ? null : Projections.include(new ArrayList<>(fields));
    }

    private static void fill(Document d, Map<String, ByteIterator> result) {
        for (Map.Entry<String, Object> e : d.entrySet()) {
            if (e.getValue() instanceof Binary) {
                result.put(e.getKey(), new ByteArrayByteIterator(((Binary) e.getValue()).getData()));
            }
        }
    }

    private static Document document(Map<String, ByteIterator> values) {
        Document d = new Document();
        for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
            d.put(e.getKey(), e.getValue().toArray());
        }
        return d;
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        try {
            Document d = collection(table).find(Filters.eq("_id", key)).projection(projection(fields)).first();
            if (d == null) {
                return Status.NOT_FOUND;
            }
            fill(d, result);
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        try (MongoCursor<Document> cursor = collection(table).find(Filters.gte("_id", startkey))
                .sort(Sorts.ascending("_id")).limit(recordcount).batchSize(recordcount)
                .projection(projection(fields)).iterator()) {
            while (cursor.hasNext()) {
                HashMap<String, ByteIterator> row = new HashMap<>();
                fill(cursor.next(), row);
                result.add(row);
            }
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        try {
            UpdateResult r = collection(table).updateOne(Filters.eq("_id", key), new Document("$set", document(values)));
            return r.getMatchedCount() == 0 ? Status.NOT_FOUND : Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        try {
            Document d = document(values);
            d.put("_id", key);
            collection(table).insertOne(d);
            return Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }

    @Override
    public Status delete(String table, String key) {
        try {
            DeleteResult r = collection(table).deleteOne(Filters.eq("_id", key));
            return r.getDeletedCount() == 0 ? Status.NOT_FOUND : Status.OK;
        } catch (Exception e) {
            return Status.ERROR;
        }
    }
}
