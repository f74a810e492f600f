import BlurfarmAPI
import Hummingbird

/// `/api/v1/workers`: the farm's worker processes.
struct WorkersController {
    let service: FarmService

    var endpoints: RouteCollection<BasicRequestContext> {
        let routes = RouteCollection(context: BasicRequestContext.self)
        routes.get { _, _ in Routes.json(WorkerList(workers: service.workers())) }
        return routes
    }
}
