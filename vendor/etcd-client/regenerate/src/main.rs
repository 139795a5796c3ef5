//! The code etcd-client's build script generates (client only, as scalebench uses it), written once
//! into the vendored crate so that building scalebench needs no protobuf compiler.

use std::path::Path;

fn main() {
    let krate = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let proto = krate.join("proto");
    let out = krate.join("src/rpc/generated");
    std::fs::create_dir_all(&out).expect("create src/rpc/generated");
    let files: Vec<_> = [
        "etcd/api/authpb/auth.proto",
        "etcd/api/etcdserverpb/rpc.proto",
        "etcd/api/mvccpb/kv.proto",
        "etcd/server/etcdserver/api/v3election/v3electionpb/v3election.proto",
        "etcd/server/etcdserver/api/v3lock/v3lockpb/v3lock.proto",
    ]
    .iter()
    .map(|f| proto.join(f))
    .collect();
    tonic_prost_build::configure()
        .build_server(false)
        .out_dir(&out)
        .compile_protos(&files, &[proto])
        .expect("protoc compiles etcd's protos");
    // Options of etcd's HTTP gateway that the client never uses.
    for unused in ["google.api.rs", "grpc.gateway.protoc_gen_openapiv2.options.rs"] {
        let _ = std::fs::remove_file(out.join(unused));
    }
    println!("generated into {}", out.display());
}
