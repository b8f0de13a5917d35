// Paths shared by the benchmark's load generators and its target servers.
export const barePath = "/bare/artifact_type";
export const grpcMethodPath = "/api.MetadataService/GetArtifactType";
