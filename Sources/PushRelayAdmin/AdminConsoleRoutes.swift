import HTTPTypes
import Hummingbird
import NIOCore
import PushRelayHTTP

/// `GET /admin/`: the admin console, a static single page (`console/`, embedded as `ConsoleAssets`). The page holds no
/// data and needs no credential; it asks for the admin token and reads `/admin/v1/…` with it. `/admin` redirects to
/// `/admin/` so that the page's relative URLs (`console.js`, `v1/stats`) resolve under a reverse proxy's prefix too.
struct AdminConsoleRoutes<Context: RequestContext> {
    /// Everything the page loads comes from this server; no inline script or style, no framing, no form posts.
    static var contentSecurityPolicy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    func register(_ routes: RouteTable<Context>) {
        routes.on(
            "/admin",
            [
                .get: { request, _ in
                    // The router hands "/admin/" here too (it ignores a trailing slash): answer the page there, redirect
                    // only the bare path. The location is relative ("admin/" from ".../admin"), so a reverse proxy's
                    // path prefix is kept.
                    if request.uri.path.hasSuffix("/") { return try Self.response(for: "index.html") }
                    return Response(status: .movedPermanently, headers: [.location: "admin/", .contentLength: "0", .cacheControl: "no-store"])
                }
            ]
        )
        for file in ConsoleAssets.files where file.name != "index.html" {
            routes.on(RouterPath("/admin/\(file.name)"), [.get: { _, _ in try Self.response(for: file.name) }])
        }
    }

    /// The console's file `name`, or a 404 `APIError` when the build embedded no such file.
    static func response(for name: String) throws(APIError) -> Response {
        guard let file = ConsoleAssets.files.first(where: { $0.name == name }) else {
            throw .notFound("The admin console has no file '\(name)'.")
        }
        let bytes = Array(file.text.utf8)
        var headers: HTTPFields = [
            .contentType: file.contentType,
            .contentLength: String(bytes.count),
            .cacheControl: "no-cache",
            .xContentTypeOptions: "nosniff",
            .contentSecurityPolicy: contentSecurityPolicy,
        ]
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }
}
