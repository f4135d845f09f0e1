GRANT SELECT, INSERT, UPDATE, DELETE ON TABLE t, u TO a, PUBLIC;
REVOKE ALL PRIVILEGES ON STREAM s FROM public CASCADE;
GRANT ALL ON ALL TABLES IN SCHEMA public TO a;
SELECT has_table_privilege('a', 't', 'SELECT, INSERT WITH GRANT OPTION'), has_schema_privilege('public', 'USAGE'), pg_has_role('a', 'MEMBER'), pg_get_userbyid(10), has_database_privilege(10, 'x', 'CONNECT');
