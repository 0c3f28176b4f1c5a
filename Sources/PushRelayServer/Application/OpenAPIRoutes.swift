import Hummingbird
import NIOCore
import PushRelayConfiguration
import PushRelayCore
import PushRelayHTTP

/// `GET /openapi.yaml` and `GET /openapi.json`: the API contract (`docs/openapi.yaml`, embedded in the binary), for
/// client generators and API tools. Public, as the document holds no secret and every endpoint it lists checks its
/// own credentials.
struct OpenAPIRoutes<Context: RequestContext> {
    /// The document as JSON, converted from the embedded YAML once per process (every application built in the same
    /// process serves the same bytes).
    let json: [UInt8]

    init() throws {
        json = try openAPIJSON.get()
    }

    func register(_ routes: RouteTable<Context>) {
        let yaml = ByteBuffer(string: OpenAPIDocument.yaml)
        let json = ByteBuffer(bytes: self.json)
        routes.on("/openapi.yaml", [.get: { _, _ in Self.response(yaml, contentType: "application/yaml; charset=utf-8") }])
        routes.on("/openapi.json", [.get: { _, _ in Self.response(json, contentType: "application/json") }])
    }

    static func response(_ body: ByteBuffer, contentType: String) -> Response {
        Response(status: .ok, headers: [.contentType: contentType], body: .init(byteBuffer: body))
    }
}

/// `OpenAPIDocument.yaml` as JSON, converted on first use.
private let openAPIJSON = Result<[UInt8], any Error> {
    JSONWriter.bytes(try YAMLTree.parse(OpenAPIDocument.yaml, source: "openapi.yaml"))
}
