/*
 * The JVM side of `schedlab bench` (MD5) and `--kernel sha256`, any MessageDigest algorithm: times
 * java.security.MessageDigest one-shot hashes (including padding) of buffers of the given
 * sizes, after a warm-up long enough for C2 to compile the provider's implCompress0 (or to
 * install the intrinsic stub).
 *
 * Usage: java [-XX:+UnlockDiagnosticVMOptions -XX:(+|-)Use<MD5|SHA256>Intrinsics] DigestBench
 *            <algorithm> <vm-flag-to-report> <size,size,...> <warmup-ms> <budget-ms-per-size>
 *
 * Output (one line each, machine-readable, parsed by crates/bench/src/jvm.rs for MD5 and by
 * crates/bench/src/sha256.rs parse_child):
 *   DIGESTBENCH-INFO java.version=<v> <vm-flag>=<true|false|unknown>
 *   DIGESTBENCH size=<bytes> hashes=<n> nanos=<ns> mb_per_s=<decimal MB/s> digest=<hex>
 *
 * Buffer contents match the Rust side (byte i = (i * 131 + 7) mod 256), so the digest lines can
 * be checked against the Rust rows'.
 */
import java.lang.management.ManagementFactory;
import java.security.MessageDigest;

public final class DigestBench {
    /** Keeps the JIT from discarding the hashes. */
    static volatile int sink;

    static byte[] fill(int size) {
        byte[] buf = new byte[size];
        for (int i = 0; i < size; i++) {
            buf[i] = (byte) (i * 131 + 7);
        }
        return buf;
    }

    static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.toString();
    }

    static String vmFlag(String name) {
        try {
            Class<?> beanClass = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            Object bean = ManagementFactory.getPlatformMXBean(
                    beanClass.asSubclass(java.lang.management.PlatformManagedObject.class));
            Object option = beanClass.getMethod("getVMOption", String.class).invoke(bean, name);
            return String.valueOf(option.getClass().getMethod("getValue").invoke(option));
        } catch (Exception | LinkageError e) {
            return "unknown";
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5) {
            System.err.println("usage: DigestBench <algorithm> <vm-flag> <size,size,...> <warmup-ms> <budget-ms-per-size>");
            System.exit(2);
        }
        String[] sizeArgs = args[2].split(",");
        int[] sizes = new int[sizeArgs.length];
        byte[][] bufs = new byte[sizes.length][];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = Integer.parseInt(sizeArgs[i].trim());
            bufs[i] = fill(sizes[i]);
        }
        long warmupNanos = Long.parseLong(args[3]) * 1_000_000L;
        long budgetNanos = Long.parseLong(args[4]) * 1_000_000L;
        MessageDigest md = MessageDigest.getInstance(args[0]);
        System.out.println("DIGESTBENCH-INFO java.version=" + System.getProperty("java.version")
                + " " + args[1] + "=" + vmFlag(args[1]));

        // Warm-up: every size in turn, so each call site's profile sees them all.
        long warmupEnd = System.nanoTime() + warmupNanos;
        int acc = 0;
        while (System.nanoTime() < warmupEnd) {
            for (byte[] buf : bufs) {
                int reps = Math.max(1, (1 << 16) / Math.max(1, buf.length));
                for (int r = 0; r < reps; r++) {
                    acc += md.digest(buf)[0];
                }
            }
        }

        for (int i = 0; i < sizes.length; i++) {
            byte[] buf = bufs[i];
            // Read the clock about every 64 KiB hashed, so timing overhead stays negligible.
            int batch = Math.max(1, (1 << 16) / Math.max(1, buf.length));
            long hashes = 0;
            long start = System.nanoTime();
            long now;
            do {
                for (int r = 0; r < batch; r++) {
                    acc += md.digest(buf)[0];
                }
                hashes += batch;
                now = System.nanoTime();
            } while (now - start < budgetNanos);
            long nanos = now - start;
            double mbPerS = (double) hashes * buf.length * 1e3 / nanos;
            System.out.println("DIGESTBENCH size=" + sizes[i] + " hashes=" + hashes + " nanos=" + nanos
                    + " mb_per_s=" + mbPerS + " digest=" + hex(md.digest(buf)));
        }
        sink = acc;
    }
}
