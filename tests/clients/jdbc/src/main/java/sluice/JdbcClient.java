/*
 * JdbcClient.java -- pgJDBC against sluiced, run by tests/clients/test_jdbc.py.
 *
 * Reads the cases from SLUICE_CASES (a JSON array of flat objects: name,
 * user, password, tls, host, port, ca) and prints one JSON line per case:
 *   {"case": NAME, "ok": true|false, "checks": [...], "error": "..."}
 * Each case connects (TLS: sslmode=verify-full with the test CA as
 * sslrootcert) in three ways:
 *   extended  the default: unnamed statements first, named server-prepared
 *             ones from the 5th execution (prepareThreshold)
 *   binary    prepareThreshold=-1: server-prepared from the first execution,
 *             results in binary format
 *   simple    preferQueryMode=simple: the simple protocol
 * and runs typed parameters and results, a fetch size of 1 in a transaction
 * (Execute with a row limit and PortalSuspended), and typed errors.
 * assumeMinServerVersion=9.4 makes pgJDBC send extra_float_digits and
 * application_name in the startup packet instead of SET statements.
 */
package sluice;

import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

public final class JdbcClient {
    private static final String[][] MODES = {
        {"extended", ""},
        {"binary", "&prepareThreshold=-1"},
        {"simple", "&preferQueryMode=simple"},
    };

    private JdbcClient() {
    }

    /* The flat objects of a JSON array (values: strings, numbers, booleans). */
    static List<Map<String, String>> parseCases(String json) {
        List<Map<String, String>> out = new ArrayList<>();
        Matcher obj = Pattern.compile("\\{([^}]*)\\}").matcher(json);
        Pattern kv = Pattern.compile("\"(\\w+)\"\\s*:\\s*(\"((?:[^\"\\\\]|\\\\.)*)\"|[\\w.-]+)");
        while (obj.find()) {
            Map<String, String> m = new HashMap<>();
            Matcher f = kv.matcher(obj.group(1));
            while (f.find()) {
                String v = f.group(3) != null ? f.group(3).replace("\\\"", "\"").replace("\\\\", "\\")
                                              : f.group(2);
                m.put(f.group(1), v);
            }
            out.add(m);
        }
        return out;
    }

    static String json(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                b.append('\\').append(ch);
            } else if (ch < 0x20) {
                b.append(String.format("\\u%04x", (int) ch));
            } else {
                b.append(ch);
            }
        }
        return b.append('"').toString();
    }

    static void check(boolean cond, String what) {
        if (!cond) {
            throw new AssertionError(what);
        }
    }

    static Connection connect(Map<String, String> c, String password, String extra) throws SQLException {
        StringBuilder url = new StringBuilder("jdbc:postgresql://")
            .append(c.get("host")).append(':').append(c.get("port")).append("/sluice")
            .append("?user=").append(c.get("user"))
            .append("&assumeMinServerVersion=9.4&connectTimeout=10&socketTimeout=60");
        if (!password.isEmpty()) {
            url.append("&password=").append(password);
        }
        if (Boolean.parseBoolean(c.get("tls"))) {
            url.append("&sslmode=verify-full&sslrootcert=").append(c.get("ca"));
        } else {
            url.append("&sslmode=disable");
        }
        url.append(extra);
        return DriverManager.getConnection(url.toString());
    }

    static void expectState(Statement st, String sql, String state) {
        try {
            st.execute(sql);
        } catch (SQLException e) {
            check(state.equals(e.getSQLState()), sql + ": SQLSTATE " + e.getSQLState() + " " + e);
            return;
        }
        throw new AssertionError(sql + " did not fail");
    }

    static void exercise(Connection conn, String mode) throws SQLException {
        conn.setAutoCommit(true);
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 1")) {
            check(rs.next() && rs.getInt(1) == 1, "SELECT 1");
        }
        String sql = "SELECT ?::int2, ?::int4, ?::int8, ?::float4, ?::float8, ?::bool, ?::text, ?::numeric";
        try (PreparedStatement ps = conn.prepareStatement(sql)) {
            // Enough executions to cross prepareThreshold in the default mode.
            for (int i = 0; i < 7; i++) {
                ps.setShort(1, (short) (7 + i));
                ps.setInt(2, -42 - i);
                ps.setLong(3, 9_000_000_000L + i);
                ps.setFloat(4, 1.5f);
                ps.setDouble(5, 2.25);
                ps.setBoolean(6, i % 2 == 0);
                ps.setString(7, "héllo" + i);
                ps.setBigDecimal(8, new BigDecimal("12.345"));
                try (ResultSet rs = ps.executeQuery()) {
                    check(rs.next(), "a row");
                    check(rs.getShort(1) == 7 + i, "int2 " + rs.getShort(1));
                    check(rs.getInt(2) == -42 - i, "int4 " + rs.getInt(2));
                    check(rs.getLong(3) == 9_000_000_000L + i, "int8 " + rs.getLong(3));
                    check(rs.getFloat(4) == 1.5f, "float4 " + rs.getFloat(4));
                    check(rs.getDouble(5) == 2.25, "float8 " + rs.getDouble(5));
                    check(rs.getBoolean(6) == (i % 2 == 0), "bool " + rs.getBoolean(6));
                    check(("héllo" + i).equals(rs.getString(7)), "text " + rs.getString(7));
                    check(new BigDecimal("12.345").equals(rs.getBigDecimal(8)), "numeric " + rs.getBigDecimal(8));
                    check(!rs.next(), "one row");
                }
            }
        }
        try (Statement st = conn.createStatement()) {
            expectState(st, "SELECT 1/0", "22012");
            expectState(st, "SELEC 1", "42601");
        }
        try (PreparedStatement ps = conn.prepareStatement("SELECT ?::int4 / 0")) {
            ps.setInt(1, 1);
            try {
                ps.executeQuery();
                throw new AssertionError("?/0 did not fail");
            } catch (SQLException e) {
                check("22012".equals(e.getSQLState()), "?/0: " + e.getSQLState());
            }
        }
        // A transaction with a fetch size: Execute with a row limit.
        conn.setAutoCommit(false);
        try (PreparedStatement ps = conn.prepareStatement("SELECT ?::int8 * 2")) {
            ps.setFetchSize(1);
            ps.setLong(1, 21);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next() && rs.getLong(1) == 42, "fetch size 1");
                check(!rs.next(), "one row with fetch size 1");
            }
        }
        conn.commit();
        // A failed transaction: 25P02 until rollback.
        try (Statement st = conn.createStatement()) {
            expectState(st, "SELECT 1/0", "22012");
            expectState(st, "SELECT 1", "25P02");
        }
        conn.rollback();
        conn.setAutoCommit(true);
        try (Statement st = conn.createStatement(); ResultSet rs = st.executeQuery("SELECT 'after'")) {
            check(rs.next() && "after".equals(rs.getString(1)), "after rollback");
        }
    }

    static List<String> runCase(Map<String, String> c) throws SQLException {
        List<String> checks = new ArrayList<>();
        for (String[] mode : MODES) {
            try (Connection conn = connect(c, c.getOrDefault("password", ""), mode[1])) {
                exercise(conn, mode[0]);
            } catch (SQLException | AssertionError e) {
                throw new AssertionError(mode[0] + ": " + e, e);
            }
            checks.add(mode[0]);
        }
        return checks;
    }

    static List<String> wrongPassword(Map<String, String> c) {
        try (Connection conn = connect(c, "wrong", "")) {
            throw new AssertionError("connected with a wrong password");
        } catch (SQLException e) {
            check("28P01".equals(e.getSQLState()), "wrong password: " + e.getSQLState() + " " + e);
        }
        return List.of("refused");
    }

    /* Statement.cancel() from another thread ends a running statement with
     * 57014.  The cancel may come before the statement started (then it does
     * nothing, as in PostgreSQL), so it is sent again until the statement ends. */
    static List<String> cancel(Map<String, String> c) throws Exception {
        try (Connection conn = connect(c, c.getOrDefault("password", ""), "");
             Statement st = conn.createStatement()) {
            Thread canceller = new Thread(() -> {
                try {
                    while (!Thread.currentThread().isInterrupted()) {
                        Thread.sleep(300);
                        st.cancel();
                    }
                } catch (InterruptedException | SQLException e) {
                    // done
                }
            });
            canceller.start();
            String state = null;
            try {
                st.executeQuery("SELECT pg_sleep(60)");
            } catch (SQLException e) {
                state = e.getSQLState();
            } finally {
                canceller.interrupt();
                canceller.join();
            }
            check("57014".equals(state), "cancel: SQLSTATE " + state);
            try (ResultSet rs = st.executeQuery("SELECT 1")) {
                check(rs.next() && rs.getInt(1) == 1, "after cancel");
            }
        }
        return List.of("cancel");
    }

    /* CopyManager: COPY FROM STDIN and TO STDOUT. */
    static List<String> copy(Map<String, String> c) throws Exception {
        try (Connection conn = connect(c, c.getOrDefault("password", ""), "");
             Statement st = conn.createStatement()) {
            st.execute("CREATE TABLE jdbc_copy (id INT PRIMARY KEY, name TEXT)");
            org.postgresql.copy.CopyManager cm =
                conn.unwrap(org.postgresql.PGConnection.class).getCopyAPI();
            StringBuilder in = new StringBuilder();
            for (int i = 0; i < 1000; i++) {
                in.append(i).append(",name ").append(i).append('\n');
            }
            long n = cm.copyIn("COPY jdbc_copy FROM STDIN WITH (FORMAT csv)",
                               new java.io.StringReader(in.toString()));
            check(n == 1000, "copyIn count " + n);
            java.io.StringWriter out = new java.io.StringWriter();
            long m = cm.copyOut("COPY (SELECT id, name FROM jdbc_copy WHERE id < 2 ORDER BY id) TO STDOUT",
                                out);
            check(m == 2 && out.toString().equals("0\tname 0\n1\tname 1\n"), "copyOut " + out);
            st.execute("DROP TABLE jdbc_copy");
        }
        return List.of("copy");
    }

    interface Job {
        List<String> run(Map<String, String> c) throws Exception;
    }

    static void report(String name, Job job, Map<String, String> c) {
        try {
            List<String> checks = job.run(c);
            StringBuilder b = new StringBuilder();
            for (String s : checks) {
                b.append(b.length() > 0 ? "," : "").append(json(s));
            }
            System.out.println("{\"case\": " + json(name) + ", \"ok\": true, \"checks\": [" + b + "]}");
        } catch (Throwable e) {
            System.out.println("{\"case\": " + json(name) + ", \"ok\": false, \"error\": " + json(e.toString()) + "}");
        }
    }

    public static void main(String[] args) {
        for (Map<String, String> c : parseCases(System.getenv("SLUICE_CASES"))) {
            report(c.get("name"), JdbcClient::runCase, c);
            if (!c.getOrDefault("password", "").isEmpty() && !Boolean.parseBoolean(c.get("tls"))) {
                report(c.get("name") + "-wrong-password", JdbcClient::wrongPassword, c);
            }
            if (c.getOrDefault("password", "").isEmpty() && !Boolean.parseBoolean(c.get("tls"))) {
                report(c.get("name") + "-cancel", JdbcClient::cancel, c);
                report(c.get("name") + "-copy", JdbcClient::copy, c);
            }
        }
    }
}
