import java.io.PrintWriter;
import java.lang.reflect.Method;
import java.util.Properties;

import site.ycsb.Utils;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

/**
 * Prints deterministic test vectors from YCSB core 0.17.0.
 *
 * In 0.17.0, CoreWorkload.buildKeyName is `protected String buildKeyName(long keynum)` (an
 * instance method reading the protected fields `zeropadding` and `orderedinserts`), so this
 * class subclasses CoreWorkload, sets those two fields directly and calls the REAL method.
 * It also computes an independent replica (Utils.fnvhash64 + "user" + zero fill) and aborts
 * if the two ever disagree.
 *
 * Usage: java -cp 'lib/*:java' KeyVectors OUTDIR
 */
public class KeyVectors extends CoreWorkload {
  static final long[] KEYNUMS = {0L, 1L, 2L, 3L, 10L, 99L, 1000L, 123456789L,
      2147483647L /* 2^31-1 */, 1099511627776L /* 2^40 */};
  static final int[] PADDINGS = {1, 20};

  String realKey(long keynum, int pad, boolean ordered) {
    this.zeropadding = pad;
    this.orderedinserts = ordered;
    return buildKeyName(keynum);
  }

  static String replicaKey(long keynum, int pad, boolean ordered) {
    if (!ordered) {
      keynum = Utils.fnvhash64(keynum);
    }
    String value = Long.toString(keynum);
    StringBuilder sb = new StringBuilder("user");
    for (int i = 0; i < pad - value.length(); i++) {
      sb.append('0');
    }
    return sb.append(value).toString();
  }

  public static void main(String[] args) throws Exception {
    String outdir = args.length > 0 ? args[0] : ".";
    // CoreWorkload's field initializer calls Measurements.getMeasurements(), which needs
    // non-null properties.
    Measurements.setProperties(new Properties());
    KeyVectors w = new KeyVectors();

    try (PrintWriter out = new PrintWriter(outdir + "/keys.tsv", "UTF-8")) {
      out.print("keynum\tzeropadding\torderedinserts\tkeyname\n");
      for (long k : KEYNUMS) {
        for (int pad : PADDINGS) {
          for (boolean ordered : new boolean[]{true, false}) {
            String real = w.realKey(k, pad, ordered);
            String rep = replicaKey(k, pad, ordered);
            if (!real.equals(rep)) {
              throw new AssertionError("mismatch for " + k + "/" + pad + "/" + ordered + ": " + real + " vs " + rep);
            }
            out.print(k + "\t" + pad + "\t" + ordered + "\t" + real + "\n");
          }
        }
      }
    }

    try (PrintWriter out = new PrintWriter(outdir + "/fnv.tsv", "UTF-8")) {
      out.print("keynum\thash\n");
      for (long k : KEYNUMS) {
        if (Utils.fnvhash64(k) != Utils.hash(k)) {
          throw new AssertionError("Utils.hash != Utils.fnvhash64");
        }
        out.print(k + "\t" + Utils.fnvhash64(k) + "\n");
      }
    }

    // Bonus: dataintegrity values from the real private buildDeterministicValue(key, fieldkey)
    // (fieldlengthdistribution=constant, so size == fieldlength).
    try (PrintWriter out = new PrintWriter(outdir + "/deterministic-values.tsv", "UTF-8")) {
      out.print("fieldlength\tkey\tfieldkey\tvalue\n");
      Method m = CoreWorkload.class.getDeclaredMethod("buildDeterministicValue", String.class, String.class);
      m.setAccessible(true);
      for (int len : new int[]{1, 10, 30, 100}) {
        Properties p = new Properties();
        p.setProperty("recordcount", "1000");
        p.setProperty("operationcount", "1000");
        p.setProperty("fieldlength", Integer.toString(len));
        p.setProperty("dataintegrity", "true");
        KeyVectors dw = new KeyVectors();
        dw.init(p);
        for (String key : new String[]{"user0", "user6284781860667377211", "user00000000000000001000"}) {
          for (String field : new String[]{"field0", "field9"}) {
            out.print(len + "\t" + key + "\t" + field + "\t" + m.invoke(dw, key, field) + "\n");
          }
        }
      }
    }

    // Bonus: ZipfianGenerator.zetastatic(n, 0.99) (package-private static, via reflection).
    try (PrintWriter out = new PrintWriter(outdir + "/zeta.tsv", "UTF-8")) {
      out.print("n\ttheta\tzeta\n");
      Class<?> zg = Class.forName("site.ycsb.generator.ZipfianGenerator");
      Method z = zg.getDeclaredMethod("zetastatic", long.class, double.class);
      z.setAccessible(true);
      for (long n : new long[]{1, 2, 10, 100, 1000, 1001, 10000, 100000, 1000000}) {
        out.print(n + "\t0.99\t" + z.invoke(null, n, 0.99) + "\n");
      }
    }
    System.out.println("wrote keys.tsv fnv.tsv deterministic-values.tsv zeta.tsv to " + outdir);
  }
}
