/*
 * ToolIntrospection.java -- what DBeaver and Metabase ask a PostgreSQL
 * server through pgJDBC when they connect and browse, against sluiced; run by
 * tests/clients/test_jdbc_tools.py.
 *
 * Connects to jdbc:postgresql://127.0.0.1:PORT/sluice (PORT the first
 * argument, user sluice, trust), runs each step and prints one line per step,
 * fields separated by '|':
 *   ok|STEP|VALUE            what the step read (rows joined by ';')
 *   error|STEP|SQLSTATE|MESSAGE
 * Steps: the driver's DatabaseMetaData calls both tools make (getSQLKeywords,
 * whose SQL is pg_get_keywords() with "word <> ALL ('{...}'::text[])";
 * getSchemas, getTables with Metabase's table types, getColumns,
 * getTypeInfo), and SQL the tools send themselves: DBeaver's SHOW
 * search_path, its pg_database row by name (a parameter), its
 * standard_conforming_strings from pg_settings, current_schema() with
 * session_user; Metabase's schema and table privilege checks
 * (has_schema_privilege, has_table_privilege) and its table sizes
 * (pg_relation_size over pg_class).
 */
package sluice;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

public final class ToolIntrospection {
    private ToolIntrospection() {
    }

    interface Step {
        String run(Connection c) throws SQLException;
    }

    static String rows(ResultSet rs, String... cols) throws SQLException {
        List<String> out = new ArrayList<>();
        ResultSetMetaData md = rs.getMetaData();
        while (rs.next()) {
            StringBuilder b = new StringBuilder();
            int n = cols.length > 0 ? cols.length : md.getColumnCount();
            for (int i = 0; i < n; i++) {
                if (i > 0) {
                    b.append(',');
                }
                b.append(cols.length > 0 ? rs.getString(cols[i]) : rs.getString(i + 1));
            }
            out.add(b.toString());
        }
        rs.close();
        return String.join(";", out);
    }

    static String sql(Connection c, String q) throws SQLException {
        try (Statement s = c.createStatement()) {
            return rows(s.executeQuery(q));
        }
    }

    static void step(Connection c, String name, Step s) {
        try {
            System.out.println("ok|" + name + "|" + s.run(c));
        } catch (SQLException e) {
            System.out.println("error|" + name + "|" + e.getSQLState() + "|"
                               + String.valueOf(e.getMessage()).replace('\n', ' '));
        }
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0]
            + "/sluice?user=sluice&sslmode=disable";
        try (Connection c = DriverManager.getConnection(url)) {
            DatabaseMetaData md = c.getMetaData();
            // DBeaver
            step(c, "keywords", x -> md.getSQLKeywords());
            step(c, "search_path", x -> sql(x, "SHOW search_path"));
            step(c, "database", x -> {
                try (PreparedStatement p = x.prepareStatement(
                        "SELECT db.oid,db.* FROM pg_catalog.pg_database db WHERE datname=?")) {
                    p.setString(1, "sluice");
                    return rows(p.executeQuery(), "datname", "encoding", "datallowconn");
                }
            });
            step(c, "standard_conforming_strings", x -> sql(x,
                "SELECT setting FROM pg_catalog.pg_settings where name='standard_conforming_strings'"));
            step(c, "current_schema", x -> sql(x, "select current_schema(),session_user"));
            step(c, "encodings", x -> sql(x,
                "SELECT c.contoencoding as encid,pg_catalog.pg_encoding_to_char(c.contoencoding) "
                + "as encname FROM pg_catalog.pg_conversion c GROUP BY c.contoencoding ORDER BY 2"));
            // both: the driver's metadata
            step(c, "schemas", x -> rows(md.getSchemas(), "TABLE_SCHEM"));
            step(c, "tables", x -> rows(md.getTables(null, "public", "%", new String[] {
                "TABLE", "PARTITIONED TABLE", "VIEW", "FOREIGN TABLE", "MATERIALIZED VIEW"}),
                "TABLE_NAME", "TABLE_TYPE"));
            step(c, "columns", x -> rows(md.getColumns(null, "public", "users", "%"),
                "COLUMN_NAME", "TYPE_NAME", "COLUMN_SIZE", "NULLABLE"));
            step(c, "type_info", x -> {
                String all = rows(md.getTypeInfo(), "TYPE_NAME");
                List<String> want = new ArrayList<>();
                for (String t : new String[] {"int8", "text", "numeric", "timestamptz", "bool"}) {
                    if (("; " + all.replace(";", "; ") + ";").contains(" " + t + ";")) {
                        want.add(t);
                    }
                }
                return String.join(",", want);
            });
            // Metabase
            step(c, "schema_privileges", x -> sql(x,
                "SELECT nspname FROM pg_catalog.pg_namespace WHERE nspname = 'public' "
                + "AND has_schema_privilege(nspname, 'USAGE')"));
            step(c, "table_privileges", x -> sql(x,
                "SELECT t.relname FROM pg_catalog.pg_class t JOIN pg_catalog.pg_namespace n "
                + "ON n.oid = t.relnamespace WHERE n.nspname = 'public' AND t.relkind IN ('r', 'm') "
                + "AND has_table_privilege(t.oid, 'SELECT') ORDER BY t.relname"));
            step(c, "table_sizes", x -> sql(x,
                "SELECT c.relname, pg_catalog.pg_relation_size(c.oid) >= 0 FROM pg_catalog.pg_class c "
                + "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1"));
        }
    }
}
