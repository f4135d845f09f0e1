/*
 * JdbcMetadata.java -- pgJDBC's DatabaseMetaData against sluiced, run by
 * tests/clients/test_jdbc_metadata.py.
 *
 * Connects to jdbc:postgresql://127.0.0.1:PORT/sluice (PORT is the first
 * argument, user sluice, trust) and prints what getTables and getColumns
 * report, one line per row, fields separated by '|':
 *   table|SCHEMA|NAME|TYPE
 *   column|TABLE|NAME|TYPE_NAME|DATA_TYPE|COLUMN_SIZE|DECIMAL_DIGITS|NULLABLE|ORDINAL
 * pgJDBC builds these from its own catalog queries (pg_class, pg_namespace,
 * pg_attribute, pg_type, pg_description, 'pg_class'::regclass, and
 * row_number() OVER (PARTITION BY ...) for the ordinal positions).
 */
package sluice;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.ResultSet;

public final class JdbcMetadata {
    private JdbcMetadata() {
    }

    public static void main(String[] args) throws Exception {
        String url = "jdbc:postgresql://127.0.0.1:" + args[0]
            + "/sluice?user=sluice&sslmode=disable&assumeMinServerVersion=9.4";
        try (Connection c = DriverManager.getConnection(url)) {
            DatabaseMetaData md = c.getMetaData();
            String[][] queries = {
                {null, "%"},                   // every table and view of every schema
            };
            for (String[] q : queries) {
                try (ResultSet rs = md.getTables(null, q[0], q[1], null)) {
                    while (rs.next()) {
                        String schema = rs.getString("TABLE_SCHEM");
                        if ("pg_catalog".equals(schema) || "information_schema".equals(schema)) {
                            continue;   // many; checked by count below
                        }
                        System.out.println("table|" + schema + "|" + rs.getString("TABLE_NAME")
                                           + "|" + rs.getString("TABLE_TYPE"));
                    }
                }
            }
            int system = 0;
            try (ResultSet rs = md.getTables(null, "pg_catalog", "pg_%", new String[] {"SYSTEM TABLE"})) {
                while (rs.next()) {
                    system++;
                }
            }
            System.out.println("system_tables|" + system);
            for (String t : new String[] {"users", "clicks", "clicks_per_user", "connections"}) {
                try (ResultSet rs = md.getColumns(null, null, t, "%")) {
                    while (rs.next()) {
                        System.out.println("column|" + rs.getString("TABLE_SCHEM") + "." + t + "|"
                                           + rs.getString("COLUMN_NAME") + "|"
                                           + rs.getString("TYPE_NAME") + "|"
                                           + rs.getInt("DATA_TYPE") + "|"
                                           + rs.getInt("COLUMN_SIZE") + "|"
                                           + rs.getInt("DECIMAL_DIGITS") + "|"
                                           + rs.getInt("NULLABLE") + "|"
                                           + rs.getInt("ORDINAL_POSITION"));
                    }
                }
            }
        }
    }
}
