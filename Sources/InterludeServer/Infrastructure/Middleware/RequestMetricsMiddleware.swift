import Foundation
import Prometheus
import Vapor

/// Counts requests and measures their duration per route pattern (never per concrete path, so ids do not
/// become labels), for `/metrics`.
struct RequestMetricsMiddleware: AsyncMiddleware {
    let registry: PrometheusCollectorRegistry

    private static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "interlude", metricName: "http_requests", unitName: "total",
            helpText: "HTTP requests answered, by method, route and status.")
    }
    private static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "interlude", metricName: "http_request_duration", unitName: "seconds",
            helpText: "Time to answer HTTP requests, by method and route.")
    }
    private static let buckets: [Duration] = [
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5), .seconds(10),
    ]

    func respond(to request: Request, chainingTo next: any AsyncResponder) async throws -> Response {
        let start = ContinuousClock.now
        let response = try await next.respond(to: request)
        let route = RequestLogMiddleware.pattern(of: request)
        let method = request.method.rawValue
        registry.makeCounter(
            descriptor: Self.requests,
            labels: [("method", method), ("route", route), ("status", String(response.status.code))]
        ).increment()
        registry.makeDurationHistogram(
            descriptor: Self.duration, labels: [("method", method), ("route", route)], buckets: Self.buckets
        ).record(ContinuousClock.now - start)
        return response
    }
}
