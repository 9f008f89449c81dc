// sim::DeploymentServer: one Server per frontend of a deployment file, all built on one
// DeploymentShared (the model behind one mutex, one trace file).
#include "core/clock.h"
#include "core/error.h"
#include "sim/deployment_state.h"
#include "sim/sim.h"
#include "sim/trace.h"

namespace servebench::sim {

struct DeploymentServer::Impl {
  std::string path;
  std::string host;
  std::shared_ptr<detail::DeploymentShared> shared;
  std::vector<std::unique_ptr<Server>> servers;
};

DeploymentServer::DeploymentServer(Options base, const std::string& path,
                                   std::optional<uint16_t> first_port)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.path = path;
  im.host = base.host;
  auto shared = std::make_shared<detail::DeploymentShared>();
  shared->text = deploy::read_deployment_file(path);
  shared->spec = deploy::parse_deployment(shared->text, path);
  shared->model = deploy::make_deployment_model(shared->spec);
  shared->start_ns = core::mono_ns();
  if (!base.trace_out.empty()) {
    shared->trace = std::make_shared<detail::TraceWriter>(base.trace_out, base.trace_out_flag);
  }
  im.shared = shared;
  for (size_t i = 0; i < shared->spec.frontends.size(); ++i) {
    Options o = base;
    o.deployment = shared;
    o.deployment_frontend = i;
    const uint16_t file_port = shared->spec.frontends[i].port;
    if (first_port) {
      o.port = *first_port == 0 ? 0 : static_cast<uint16_t>(*first_port + i);
    } else {
      o.port = file_port != 0 ? file_port : static_cast<uint16_t>(8000 + i);
    }
    im.servers.push_back(std::make_unique<Server>(std::move(o)));
  }
}

DeploymentServer::~DeploymentServer() {
  stop();
}

void DeploymentServer::start() {
  for (size_t i = 0; i < impl_->servers.size(); ++i) {
    try {
      impl_->servers[i]->start();
    } catch (const core::Error& e) {
      throw core::Error(e.kind(), impl_->path + " frontend " + frontend_name(i), e.what());
    }
  }
}

size_t DeploymentServer::frontend_count() const {
  return impl_->servers.size();
}
const std::string& DeploymentServer::frontend_name(size_t index) const {
  return impl_->shared->spec.frontends.at(index).name;
}
uint16_t DeploymentServer::port(size_t index) const {
  return impl_->servers.at(index)->port();
}
std::vector<std::string> DeploymentServer::urls() const {
  std::vector<std::string> out;
  for (size_t i = 0; i < impl_->servers.size(); ++i) {
    out.push_back("http://" + impl_->host + ":" + std::to_string(port(i)));
  }
  return out;
}
const std::string& DeploymentServer::deployment_name() const {
  return impl_->shared->spec.name;
}
const std::string& DeploymentServer::path() const {
  return impl_->path;
}
const std::string& DeploymentServer::file_text() const {
  return impl_->shared->text;
}

void DeploymentServer::wait() {
  if (!impl_->servers.empty()) impl_->servers[0]->wait();
  stop();
}

void DeploymentServer::stop() {
  for (auto& s : impl_->servers) s->stop();
  if (impl_->shared && impl_->shared->trace) impl_->shared->trace->flush();
}

}  // namespace servebench::sim
