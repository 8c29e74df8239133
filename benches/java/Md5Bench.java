/*
 * The JVM side of `schedlab bench`: times java.security.MessageDigest("MD5") one-shot hashes
 * (including padding) of buffers of the given sizes, after a warm-up long enough for C2 to
 * compile sun.security.provider.MD5.implCompress0 (or to install the MD5 intrinsic stub).
 *
 * Usage: java [-XX:+UnlockDiagnosticVMOptions -XX:(+|-)UseMD5Intrinsics] Md5Bench
 *            <size,size,...> <warmup-ms> <budget-ms-per-size>
 *
 * Output (one line each, machine-readable, parsed by crates/cli/src/bench/java.rs):
 *   MD5BENCH-VM java.version=<v> UseMD5Intrinsics=<true|false|unknown>
 *   MD5BENCH size=<bytes> hashes=<n> nanos=<ns> mb_per_s=<decimal MB/s> digest=<hex of the buffer's MD5>
 *
 * Buffer contents match the Rust side (byte i = (i * 131 + 7) mod 256), so the digest lines can
 * be checked against OpenSSL's.
 */
import java.lang.management.ManagementFactory;
import java.security.MessageDigest;

public final class Md5Bench {
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

    static String md5IntrinsicFlag() {
        try {
            Class<?> beanClass = Class.forName("com.sun.management.HotSpotDiagnosticMXBean");
            Object bean = ManagementFactory.getPlatformMXBean(
                    beanClass.asSubclass(java.lang.management.PlatformManagedObject.class));
            Object option = beanClass.getMethod("getVMOption", String.class).invoke(bean, "UseMD5Intrinsics");
            return String.valueOf(option.getClass().getMethod("getValue").invoke(option));
        } catch (Exception | LinkageError e) {
            return "unknown";
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 3) {
            System.err.println("usage: Md5Bench <size,size,...> <warmup-ms> <budget-ms-per-size>");
            System.exit(2);
        }
        String[] sizeArgs = args[0].split(",");
        int[] sizes = new int[sizeArgs.length];
        byte[][] bufs = new byte[sizes.length][];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = Integer.parseInt(sizeArgs[i].trim());
            bufs[i] = fill(sizes[i]);
        }
        long warmupNanos = Long.parseLong(args[1]) * 1_000_000L;
        long budgetNanos = Long.parseLong(args[2]) * 1_000_000L;
        MessageDigest md = MessageDigest.getInstance("MD5");
        System.out.println("MD5BENCH-VM java.version=" + System.getProperty("java.version")
                + " UseMD5Intrinsics=" + md5IntrinsicFlag());

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
            System.out.println("MD5BENCH size=" + sizes[i] + " hashes=" + hashes + " nanos=" + nanos
                    + " mb_per_s=" + mbPerS + " digest=" + hex(md.digest(buf)));
        }
        sink = acc;
    }
}
