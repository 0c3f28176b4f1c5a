import Foundation
import PushRelayConfiguration
import PushRelayCore
import PushRelayServerTestRig
import PushRelayTestHarness
import Testing

@testable import PushRelayServer

/// `GET /openapi.yaml` and `/openapi.json` serve `docs/openapi.yaml`, embedded at build time (EmbedPlugin); the
/// embedded copy must not drift from the file, and the document must list every path the server routes.
@Suite struct OpenAPIRoutesTests {
    static let file = RepositoryRoot.url.appendingPathComponent("docs/openapi.yaml")

    @Test func theEmbeddedDocumentIsTheFile() throws {
        let text = try String(contentsOf: Self.file, encoding: .utf8)
        #expect(
            OpenAPIDocument.yaml + "\n" == text || OpenAPIDocument.yaml == text,
            "docs/openapi.yaml differs from OpenAPIDocument (EmbedPlugin)"
        )
    }

    @Test func bothFormsAreServedAndAgree() async throws {
        try await TestServer.with(.router) { (s: TestServer) async throws in
            let yaml = try await s.request(.GET, "/openapi.yaml")
            #expect(yaml.status == 200)
            #expect(yaml.headers["content-type"]?.hasPrefix("application/yaml") == true)
            #expect(yaml.rawBody == OpenAPIDocument.yaml)
            let json = try await s.request(.GET, "/openapi.json")
            #expect(json.status == 200)
            #expect(json.headers["content-type"] == "application/json")
            #expect(json.json == (try YAMLTree.parse(OpenAPIDocument.yaml, source: "openapi.yaml")))
            #expect(json["openapi"]?.stringValue?.hasPrefix("3.1") == true)
            let post = try await s.request(.POST, "/openapi.json", body: "{}")
            expectJSONError(post, status: 405)
        }
    }

    /// Every route the server registers is in the document (a new endpoint cannot ship undocumented).
    @Test func everyRoutedPathIsDocumented() throws {
        let document = try YAMLTree.parse(OpenAPIDocument.yaml, source: "openapi.yaml")
        let paths = Set(document["paths"]?.objectValue?.keys.map { $0 } ?? [])
        let routed = [
            "/api/sendPush/android/v1", "/api/sendPushNotification", "/api/sendPush/iOS/v1", "/api/checkRateLimits", "/api/websocket",
            "/_matrix/push/v1/notify", "/api/v1/devices", "/api/v1/calls", "/health", "/ready", "/metrics", "/openapi.yaml", "/openapi.json",
            "/admin/", "/admin/v1/stats",
        ]
        for path in routed { #expect(paths.contains(path), "\(path) is not in docs/openapi.yaml") }
        #expect(paths.contains { $0.hasPrefix("/relay-to/") }, "the WebPush relay is documented")
        #expect(paths.contains { $0.hasPrefix("/admin/v1/quotas") }, "the admin quota endpoints are documented")
    }
}
