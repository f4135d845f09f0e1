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
 * (pg_relation_size over pg_class), and the sync queries of its
 * PostgreSQL driver: the user check (pg_user), tables with their estimated
 * rows (pg_stat_user_tables), table privileges over pg_tables, pg_views and
 * pg_matviews, a materialized view's fields (pg_attribute x pg_type,
 * format('%s')), primary keys (information_schema.table_constraints x
 * key_column_usage) and enums (pg_enum).
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
            step(c, "mb_user", x -> sql(x, "SELECT 1 AS x FROM pg_user WHERE usename = 'sluice'"));
            step(c, "mb_tables", x -> sql(x,
                "SELECT n.nspname AS \"schema\", c.relname AS \"name\", c.relkind AS \"type\", "
                + "d.description AS \"description\", stat.n_live_tup AS \"estimated-row-count\" "
                + "FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON c.relnamespace = n.oid "
                + "LEFT JOIN pg_catalog.pg_description d ON d.objoid = c.oid AND d.objsubid = 0 "
                + "LEFT JOIN pg_catalog.pg_stat_user_tables stat ON stat.relname = c.relname "
                + "AND stat.schemaname = n.nspname WHERE n.nspname = 'public' ORDER BY 2"));
            step(c, "mb_table_privileges", x -> sql(x,
                "SELECT t.schemaname, t.objectname, has_table_privilege(CAST(t.schemaname || '.' "
                + "|| t.objectname AS TEXT), 'SELECT') AS select FROM (SELECT schemaname, tablename "
                + "AS objectname FROM pg_catalog.pg_tables UNION SELECT schemaname, viewname AS "
                + "objectname FROM pg_catalog.pg_views UNION SELECT schemaname, matviewname AS "
                + "objectname FROM pg_catalog.pg_matviews) t WHERE t.schemaname IN ('public', 'sys') "
                + "AND t.objectname IN ('users', 'clicks', 'per_user', 'queries') ORDER BY 1, 2"));
            step(c, "mb_matview_fields", x -> sql(x,
                "SELECT \"pa\".\"attname\" AS \"name\", CASE WHEN \"ptn\".\"nspname\" IN "
                + "('public', 'pg_catalog') THEN FORMAT('%s', \"pt\".\"typname\") ELSE "
                + "FORMAT('\"%s\".\"%s\"', \"ptn\".\"nspname\", \"pt\".\"typname\") END AS "
                + "\"database-type\", \"pa\".\"attnum\" - 1 AS \"database-position\", "
                + "\"pn\".\"nspname\" AS \"table-schema\", \"pc\".\"relname\" AS \"table-name\" "
                + "FROM \"pg_catalog\".\"pg_class\" AS \"pc\" INNER JOIN \"pg_catalog\".\"pg_namespace\" "
                + "AS \"pn\" ON \"pn\".\"oid\" = \"pc\".\"relnamespace\" INNER JOIN "
                + "\"pg_catalog\".\"pg_attribute\" AS \"pa\" ON \"pa\".\"attrelid\" = \"pc\".\"oid\" "
                + "INNER JOIN \"pg_catalog\".\"pg_type\" AS \"pt\" ON \"pt\".\"oid\" = \"pa\".\"atttypid\" "
                + "INNER JOIN \"pg_catalog\".\"pg_namespace\" AS \"ptn\" ON \"ptn\".\"oid\" = "
                + "\"pt\".\"typnamespace\" WHERE (\"pc\".\"relkind\" = 'm') AND (\"pa\".\"attnum\" >= 1) "
                + "AND (\"pn\".\"nspname\" = 'public') ORDER BY \"table-schema\" ASC, "
                + "\"table-name\" ASC, \"database-position\" ASC"));
            step(c, "mb_primary_keys", x -> sql(x,
                "SELECT \"tc\".\"table_schema\", \"tc\".\"table_name\", \"kc\".\"column_name\" "
                + "FROM \"information_schema\".\"table_constraints\" AS \"tc\" INNER JOIN "
                + "\"information_schema\".\"key_column_usage\" AS \"kc\" ON (\"tc\".\"constraint_name\" "
                + "= \"kc\".\"constraint_name\") AND (\"tc\".\"table_schema\" = \"kc\".\"table_schema\") "
                + "AND (\"tc\".\"table_name\" = \"kc\".\"table_name\") WHERE \"tc\".\"constraint_type\" "
                + "= 'PRIMARY KEY'"));
            step(c, "mb_enums", x -> sql(x,
                "SELECT nspname, typname FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace "
                + "WHERE t.oid IN (SELECT DISTINCT enumtypid FROM pg_enum e)"));
            step(c, "table_sizes", x -> sql(x,
                "SELECT c.relname, pg_catalog.pg_relation_size(c.oid) >= 0 FROM pg_catalog.pg_class c "
                + "JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace "
                + "WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 1"));
        }
    }
}
