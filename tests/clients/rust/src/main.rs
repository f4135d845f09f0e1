//! tokio-postgres against a running sluiced (tests/clients/test_rust.py runs
//! it with SLUICE_PORT set).  Each case prints "ok NAME" or "FAIL NAME: why";
//! the exit status is 1 when any case failed.  Cases:
//!
//!   binary_params     typed parameters and results in binary format (what
//!                     tokio-postgres sends and asks for with query())
//!   text_params       parameters sent in text format (a ToSql that says
//!                     Format::Text), results in binary
//!   simple_query      the simple query protocol: every value as text
//!   prepared_reuse    one prepared statement run with many parameter sets
//!   table_roundtrip   INSERT with parameters into a table, SELECT it back
//!   nulls_arrays      NULL parameters and results, int4[] and text[] both ways
//!   transaction       a transaction block committed, one rolled back
//!   typed_error       the SQLSTATE of an error (42P01, 22012)
//!
//! Expected values are written here, from PostgreSQL's semantics.

use std::error::Error;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use bytes::BytesMut;
use tokio_postgres::types::{Format, IsNull, ToSql, Type};
use tokio_postgres::{Client, NoTls, SimpleQueryMessage};

type R = Result<(), Box<dyn Error + Sync + Send>>;

/// A parameter sent in text format, whatever the type the server inferred.
#[derive(Debug)]
struct Text(&'static str);

impl ToSql for Text {
    fn to_sql(&self, _: &Type, out: &mut BytesMut) -> Result<IsNull, Box<dyn Error + Sync + Send>> {
        out.extend_from_slice(self.0.as_bytes());
        Ok(IsNull::No)
    }
    fn accepts(_: &Type) -> bool {
        true
    }
    fn encode_format(&self, _: &Type) -> Format {
        Format::Text
    }
    tokio_postgres::types::to_sql_checked!();
}

fn check<T: PartialEq + std::fmt::Debug>(what: &str, got: T, want: T) -> R {
    if got == want {
        Ok(())
    } else {
        Err(format!("{what}: got {got:?}, want {want:?}").into())
    }
}

async fn binary_params(c: &Client) -> R {
    let row = c
        .query_one(
            "SELECT $1::int2 + 1::int2, $2::int4 * 2, $3::int8 - 1, $4::float8 / 2, $5::bool, \
             $6::text || '!', $7::bytea, $8::timestamp",
            &[&7i16, &-21i32, &9_000_000_001i64, &5.0f64, &true, &"héllo", &vec![0u8, 255u8],
              &(UNIX_EPOCH + Duration::from_secs(1_700_000_000))],
        )
        .await?;
    check("int2", row.get::<_, i16>(0), 8)?;
    check("int4", row.get::<_, i32>(1), -42)?;
    check("int8", row.get::<_, i64>(2), 9_000_000_000)?;
    check("float8", row.get::<_, f64>(3), 2.5)?;
    check("bool", row.get::<_, bool>(4), true)?;
    check("text", row.get::<_, String>(5), "héllo!".to_string())?;
    check("bytea", row.get::<_, Vec<u8>>(6), vec![0u8, 255u8])?;
    check("timestamp", row.get::<_, SystemTime>(7),
          UNIX_EPOCH + Duration::from_secs(1_700_000_000))?;
    Ok(())
}

async fn text_params(c: &Client) -> R {
    let row = c
        .query_one(
            "SELECT $1::int4 + 1, $2::int8 * 3, $3::numeric::text, $4::date::text, \
             $5::timestamp::text, $6::bool, $7::float8",
            &[&Text("41"), &Text("3000000000"), &Text("12.50"), &Text("2024-02-29"),
              &Text("2024-01-02 03:04:05.5"), &Text("t"), &Text("-0.25")],
        )
        .await?;
    check("int4", row.get::<_, i32>(0), 42)?;
    check("int8", row.get::<_, i64>(1), 9_000_000_000)?;
    check("numeric", row.get::<_, String>(2), "12.50".to_string())?;
    check("date", row.get::<_, String>(3), "2024-02-29".to_string())?;
    check("timestamp", row.get::<_, String>(4), "2024-01-02 03:04:05.5".to_string())?;
    check("bool", row.get::<_, bool>(5), true)?;
    check("float8", row.get::<_, f64>(6), -0.25)?;
    Ok(())
}

async fn simple_query(c: &Client) -> R {
    let msgs = c
        .simple_query("SELECT 1::int4 AS a, 'x'::text AS b, NULL::int8 AS c, 1.5::numeric AS d")
        .await?;
    let row = msgs
        .iter()
        .find_map(|m| if let SimpleQueryMessage::Row(r) = m { Some(r) } else { None })
        .ok_or("no row")?;
    check("columns", row.columns().iter().map(|c| c.name().to_string()).collect::<Vec<_>>(),
          vec!["a".to_string(), "b".into(), "c".into(), "d".into()])?;
    check("a", row.get(0), Some("1"))?;
    check("b", row.get(1), Some("x"))?;
    check("c", row.get(2), None)?;
    check("d", row.get(3), Some("1.5"))?;
    Ok(())
}

async fn prepared_reuse(c: &Client) -> R {
    let st = c.prepare("SELECT $1::int8 * $1::int8").await?;
    check("param types", st.params().to_vec(), vec![Type::INT8])?;
    for i in 0i64..50 {
        let v: i64 = c.query_one(&st, &[&i]).await?.get(0);
        check("square", v, i * i)?;
    }
    Ok(())
}

async fn table_roundtrip(c: &Client) -> R {
    c.batch_execute("CREATE TABLE rust_items (id BIGINT PRIMARY KEY, name TEXT, price NUMERIC(8,2))")
        .await?;
    let ins = c.prepare("INSERT INTO rust_items VALUES ($1, $2, $3::text::numeric)").await?;
    for (id, name, price) in [(1i64, "apple", "1.25"), (2, "pear", "0.80"), (3, "fig", "3.00")] {
        check("insert count", c.execute(&ins, &[&id, &name, &price]).await?, 1)?;
    }
    let rows = c
        .query("SELECT id, name, price::text FROM rust_items WHERE id >= $1 ORDER BY id", &[&2i64])
        .await?;
    let got: Vec<(i64, String, String)> =
        rows.iter().map(|r| (r.get(0), r.get(1), r.get(2))).collect();
    check("rows", got, vec![(2, "pear".to_string(), "0.80".to_string()),
                            (3, "fig".to_string(), "3.00".to_string())])?;
    Ok(())
}

async fn nulls_arrays(c: &Client) -> R {
    let none: Option<i32> = None;
    let row = c
        .query_one("SELECT $1::int4, $2::int4[], $3::text[], array_length($2::int4[], 1)",
                   &[&none, &vec![1i32, 2, 3], &vec!["a", "b c"]])
        .await?;
    check("null", row.get::<_, Option<i32>>(0), None)?;
    check("int4[]", row.get::<_, Vec<i32>>(1), vec![1, 2, 3])?;
    check("text[]", row.get::<_, Vec<String>>(2), vec!["a".to_string(), "b c".to_string()])?;
    check("array_length", row.get::<_, i32>(3), 3)?;
    Ok(())
}

async fn transaction(c: &mut Client) -> R {
    c.batch_execute("CREATE TABLE rust_tx (k BIGINT PRIMARY KEY, v TEXT)").await?;
    let tx = c.transaction().await?;
    tx.execute("INSERT INTO rust_tx VALUES ($1, $2)", &[&1i64, &"kept"]).await?;
    tx.commit().await?;
    let tx = c.transaction().await?;
    tx.execute("INSERT INTO rust_tx VALUES ($1, $2)", &[&2i64, &"dropped"]).await?;
    tx.rollback().await?;
    let rows = c.query("SELECT k, v FROM rust_tx ORDER BY k", &[]).await?;
    let got: Vec<(i64, String)> = rows.iter().map(|r| (r.get(0), r.get(1))).collect();
    check("rows", got, vec![(1, "kept".to_string())])?;
    Ok(())
}

async fn typed_error(c: &Client) -> R {
    let e = c.query("SELECT * FROM no_such_table", &[]).await.err().ok_or("no error")?;
    check("42P01", e.code().map(|s| s.code().to_string()), Some("42P01".to_string()))?;
    let e = c.query_one("SELECT 1 / $1::int4", &[&0i32]).await.err().ok_or("no error")?;
    check("22012", e.code().map(|s| s.code().to_string()), Some("22012".to_string()))?;
    // the connection goes on after an error
    check("after", c.query_one("SELECT 2::int4", &[]).await?.get::<_, i32>(0), 2)?;
    Ok(())
}

fn report(name: &str, r: R, failed: &mut bool) {
    match r {
        Ok(()) => println!("ok {name}"),
        Err(e) => {
            *failed = true;
            println!("FAIL {name}: {e}");
        }
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let port = std::env::var("SLUICE_PORT").expect("SLUICE_PORT");
    let conf = format!("host=127.0.0.1 port={port} user=sluice dbname=sluice");
    let (mut client, conn) = tokio_postgres::connect(&conf, NoTls).await.expect("connect");
    tokio::spawn(async move {
        if let Err(e) = conn.await {
            eprintln!("connection error: {e}");
        }
    });
    let mut failed = false;
    report("binary_params", binary_params(&client).await, &mut failed);
    report("text_params", text_params(&client).await, &mut failed);
    report("simple_query", simple_query(&client).await, &mut failed);
    report("prepared_reuse", prepared_reuse(&client).await, &mut failed);
    report("table_roundtrip", table_roundtrip(&client).await, &mut failed);
    report("nulls_arrays", nulls_arrays(&client).await, &mut failed);
    report("transaction", transaction(&mut client).await, &mut failed);
    report("typed_error", typed_error(&client).await, &mut failed);
    std::process::exit(if failed { 1 } else { 0 });
}
